// Caps on what a flag's targeting and an evaluation context may hold (issue 18). They keep one flag's
// compiled logic, one request's context and one regular expression small enough that evaluation stays
// in microseconds; validate.ts refuses definitions past them, context.ts refuses contexts past them.

/** Rules per flag and environment. */
export const MAX_RULES = 100;
/** Conditions per rule or per segment. */
export const MAX_CONDITIONS = 50;
/** Segments referenced by one rule. */
export const MAX_RULE_SEGMENTS = 20;
/** Operands of one condition (the list of `in`, the CIDRs of `inCidr`). */
export const MAX_VALUES = 1000;
/** Characters of one string operand. */
export const MAX_VALUE_LENGTH = 1024;
/** Characters of an attribute path, and its dot-separated parts. */
export const MAX_ATTRIBUTE_LENGTH = 256;
export const MAX_ATTRIBUTE_PARTS = 10;
/** Variants of one flag, and characters of a variant name. */
export const MAX_VARIANTS = 100;
export const MAX_VARIANT_NAME_LENGTH = 128;
/** Prerequisites of one flag, and how deep prerequisites of prerequisites may go. */
export const MAX_PREREQUISITES = 10;
export const MAX_PREREQUISITE_DEPTH = 5;
/** flagd's own cap on the sum of a split's weights (Math.MaxInt32). */
export const MAX_TOTAL_WEIGHT = 2147483647;
/** Characters of a regular expression, and of the input it is matched against (longer input never matches). */
export const MAX_PATTERN_LENGTH = 256;
export const MAX_MATCH_INPUT_LENGTH = 1024;
/**
 * What one evaluation of a flag's JSON Logic may cost, in the operations of cost.ts (operators,
 * iterations, entries read inside iterators), and how deep its iterators may nest (docs/adr/0024).
 */
export const MAX_LOGIC_COST = 20_000;
export const MAX_ITERATOR_NESTING = 3;
/**
 * The regular-expression work one flag may need: the states of its `matches` patterns (its rules', its
 * segments' and its prerequisites', regex.ts regexStates) added up, each matched against at most
 * MAX_MATCH_INPUT_LENGTH characters. re2js costs up to ~80 ns per state and character.
 */
export const MAX_REGEX_STATES = 32;
/** The CIDRs of one flag's `inCidr` conditions (its rules', segments' and prerequisites') together. */
export const MAX_FLAG_CIDRS = 1000;
/** Rule ids, rule and segment names, segment keys. */
export const MAX_NAME_LENGTH = 200;

/** Nesting depth of an evaluation context (the top level is 1). */
export const MAX_CONTEXT_DEPTH = 8;
/** Values (of any kind, nested included) in one evaluation context. */
export const MAX_CONTEXT_ENTRIES = 1000;
/** Characters of one string (or key) in an evaluation context. */
export const MAX_CONTEXT_STRING_LENGTH = 8192;
