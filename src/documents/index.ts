export { flagdAdminRoutes } from './flagd.admin-routes.ts';
export { FlagdService } from './flagd.service.ts';
export { projectDocumentRoutes } from './project-document.routes.ts';
export {
  describePlan,
  type DocumentFlag,
  type DocumentFlagEnvironment,
  type DocumentSegment,
  type PlanStep,
  type ProjectDocument,
} from './project-document.ts';
export {
  type ApplyResult,
  ProjectDocumentService,
  type ProposalOutcome,
  type ProposedChangeRequest,
  type ProtectedEnvironmentChanges,
} from './project-document.service.ts';
export { proposedChangeRequestSchema } from './project-document.schemas.ts';
export { readUnleash, UnleashFormatError, type UnleashModel } from './unleash-format.ts';
export { flagTypeOf, translateUnleash, variantValue, type NotCarried, type UnleashTranslation } from './unleash-import.ts';
export { unleashRoutes } from './unleash.routes.ts';
export { UnleashImportService, type UnleashImportResult } from './unleash.service.ts';
