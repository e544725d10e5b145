export { flagAdminRoutes } from './flag.admin-routes.ts';
export { playgroundRoutes } from './playground.routes.ts';
export { environmentParams } from './playground.schemas.ts';
export { PlaygroundService } from './playground.service.ts';
export { FlagService, type LastEvaluated } from './flag.service.ts';
export { flagParams, keyHeaders } from './flag.schemas.ts';
export { FlagStore } from './flag.store.ts';
export { type FlagWrite, type FlagWriteGuard, FlagWrites, type WriteAuthority } from './flag-writes.ts';
export {
  AUDITED_FLAG_FIELDS,
  auditedFlag,
  type Flag,
  type FlagConfig,
  FLAG_CONFIG_FIELDS,
  flagConfig,
  type FlagValues,
  normalizeDate,
  normalizeRules,
  releaseRuleChange,
  RESERVED_SLUGS,
  type RuleInput,
  ruleInputProblems,
  SLUG_MAX_LENGTH,
  SLUG_PATTERN,
  SLUG_REGEX,
  targetedFlag,
} from './flag.ts';
export { enabledOf, safeTargeting } from './flag-serve.ts';
export { checkPreviewContent } from './preview-content.ts';
export { flagValuesProperties } from './flag.schemas.ts';
export { flagTypeSchema, prerequisiteSchema, ruleSchema, targetingValueProperties, variantsSchema } from './targeting.schemas.ts';
