export { SegmentStore } from './segment.store.ts';
export { engineSegment, type StoredSegment } from './segment.ts';
export { conditionSchema, segmentSchema } from './segment.schemas.ts';
