// The targeting engine (issue 18): the typed model, its compilation to flagd's JSON Logic, evaluation
// with flagd-core, validation, flagd import/export and the playground's explanations. Pure: no I/O.
export * from './targeting.ts';
export * from './limits.ts';
export { compileEnvironment, type CompiledEnvironment, type CompileOptions } from './engine.ts';
export { prepareContext, type PreparedContext } from './context.ts';
export { regexProblem } from './regex.ts';
export { isExtension, EXTENSION_KEY, TIMESTAMP_ATTRIBUTE } from './conditions.ts';
