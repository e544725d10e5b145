// The targeting engine (issue 18): the typed model, its compilation to flagd's JSON Logic, evaluation
// with flagd-core, validation, flagd import/export and the playground's explanations. Pure: no I/O.
export * from './targeting.ts';
export * from './limits.ts';
export { compileEnvironment, type CompiledEnvironment, type CompileOptions, type PreparedEvaluation } from './engine.ts';
export { prepareContext, type PreparedContext, type PrepareOptions } from './context.ts';
export { compileRegex, regexProblem, type SafeRegex } from './regex.ts';
export { drain, inSlices, type Steps } from './slices.ts';
export { isExtension, EXTENSION_KEY, rolloutBucket, TIMESTAMP_ATTRIBUTE } from './conditions.ts';
export {
  attributeProblem,
  conditionProblem,
  environmentProblem,
  environmentSteps,
  unknownRefProblem,
  segmentProblem,
  targetingProblem,
  type EnvironmentProblem,
  type KnownKeys,
  type TargetingProblem,
} from './validate.ts';
export {
  FLAGD_SCHEMA,
  environmentPortability,
  flagPortability,
  isPortableSegment,
  toFlagdDefinition,
  type EmbeddedTargeting,
  type FlagdDefinition,
  type FlagdFlag,
  type Portability,
} from './flagd-export.ts';
export {
  explain,
  type ConditionResult,
  type Explanation,
  type PrerequisiteResult,
  type RuleExplanation,
  type SegmentResult,
  type SplitResult,
} from './explain.ts';
