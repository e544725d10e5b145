export { segmentAdminRoutes } from './segment.routes.ts';
export { conditionSchema, segmentSchema } from './segment.schemas.ts';
export { SegmentService } from './segment.service.ts';
export { SegmentStore } from './segment.store.ts';
export { engineSegment, type StoredSegment } from './segment.ts';
