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
export { type ApplyResult, ProjectDocumentService } from './project-document.service.ts';
export {
  adminCall,
  applyCommand,
  CommandError,
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
export { SLUG_REGEX } from './flag.ts';
export { FlagStore } from './flag.store.ts';
export { answerUnroutableFlagRead, readKeyHeaders } from './read/flag.cache-headers.ts';
export type { FlagChange, FlagChanges } from './read/flag-changes.ts';
export { FlagFastPath } from './read/flag.fast-path.ts';
export { type FlagReadPath, openFlagReadPath } from './read/flag-read-path.ts';
export { FlagReadModel } from './read/flag.read-model.ts';
export { ofrepRoutes } from './ofrep.routes.ts';
export type { OfrepStreams, StreamTokens } from './read/ofrep.streams.ts';
