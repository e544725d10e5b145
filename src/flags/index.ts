export { flagAdminRoutes } from './flag.admin-routes.ts';
export { flagdAdminRoutes } from './flagd.admin-routes.ts';
export { FlagdService } from './flagd.service.ts';
export { PlaygroundService } from './playground.service.ts';
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
export {
  adminCall,
  applyCommand,
  CommandError,
  describeChangeRequests,
  exportCommand,
  parseDocument,
  remoteOptions,
  type RemoteOptions,
  takeFlag,
  takeOption,
} from './project-document.cli.ts';
export { flagPublicRoutes } from './flag.routes.ts';
export { FlagService } from './flag.service.ts';
export { keyHeaders } from './flag.schemas.ts';
export { FlagStore } from './flag.store.ts';
export { answerUnroutableFlagRead, readKeyHeaders } from './read/flag.cache-headers.ts';
export type { FlagChange, FlagChanges } from './read/flag-changes.ts';
export { FlagFastPath } from './read/flag.fast-path.ts';
export { type FlagReadPath, openFlagReadPath } from './read/flag-read-path.ts';
export { FlagReadModel } from './read/flag.read-model.ts';
export { ofrepRoutes } from './ofrep.routes.ts';
export type { OfrepStreams, StreamTokens } from './read/ofrep.streams.ts';
export type { EvaluationCount, FlagUsageTally, ReadSurface, ReasonCounts } from './read/flag-usage-tally.ts';
export { reasonCounts } from './read/flag-usage-tally.ts';
export { flagUsageAdminRoutes } from './usage/flag-usage.routes.ts';
export { FlagUsage } from './usage/flag-usage.service.ts';
export { FlagUsageStore } from './usage/flag-usage.store.ts';
export { type Flag, type FlagConfig, FLAG_CONFIG_FIELDS, flagConfig, type FlagValues, SLUG_REGEX } from './flag.ts';
export { flagValuesProperties } from './flag.schemas.ts';
export { proposedChangeRequestSchema } from './project-document.schemas.ts';
