export { segmentAdminRoutes } from './segment.routes.ts';
export { conditionSchema, segmentSchema } from './segment.schemas.ts';
export { SegmentService } from './segment.service.ts';
export { SegmentStore } from './segment.store.ts';
export { engineSegment, SEGMENT_KEY_MAX_LENGTH, SEGMENT_KEY_PATTERN, type StoredSegment } from './segment.ts';
