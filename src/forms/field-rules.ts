import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { compileRegex, regexProblem } from '../targeting/index.ts';
import { type MessageKey, message } from '../errors.ts';

// Field rules (issue 34): one JSON Schema object over a submission's fields, in a subset that the admin
// API enforces when the rules are saved (form.schemas.ts `fieldRules`, and `fieldRulesProblems` below).
// Submissions are checked by Ajv, the validator Fastify already uses, with `pattern` matched by the
// targeting engine's linear-time engine (re2js): a pattern cannot hang intake whatever the input.

export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export const FIELD_FORMATS = ['email', 'uri', 'date'] as const;

/** The rule of one field: the keywords of the subset, each optional. */
export type FieldRule = {
  type?: (typeof FIELD_TYPES)[number];
  format?: (typeof FIELD_FORMATS)[number];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: Array<string | number | boolean>;
  minimum?: number;
  maximum?: number;
  description?: string;
};

/** `fieldRules` of a form: `{"type":"object","properties":{...},"required":[...],"additionalProperties":false}`. */
export type FieldRules = {
  type?: 'object';
  properties?: Record<string, FieldRule>;
  required?: string[];
  additionalProperties?: boolean;
};

/**
 * The codes of a refused field: Formspree's five (REQUIRED_FIELD_MISSING, REQUIRED_FIELD_EMPTY,
 * TYPE_EMAIL, TYPE_NUMERIC, TYPE_TEXT), and Flagpost's own for the other keywords (docs/errors.md).
 */
export type FieldErrorCode =
  | 'REQUIRED_FIELD_MISSING'
  | 'REQUIRED_FIELD_EMPTY'
  | 'TYPE_EMAIL'
  | 'TYPE_NUMERIC'
  | 'TYPE_TEXT'
  | 'TYPE_BOOLEAN'
  | 'TYPE_URL'
  | 'TYPE_DATE'
  | 'TOO_SHORT'
  | 'TOO_LONG'
  | 'PATTERN_MISMATCH'
  | 'NOT_ALLOWED_VALUE'
  | 'TOO_SMALL'
  | 'TOO_LARGE'
  | 'UNKNOWN_FIELD';

/** One refused field, as the 422 answer lists it. */
export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}

/** The problems of rules being saved (the shape is the schema's job): patterns that are not linear-time RE2. */
export function fieldRulesProblems(rules: FieldRules): Array<{ field: string; reason: string }> {
  const problems: Array<{ field: string; reason: string }> = [];
  for (const [name, rule] of Object.entries(rules.properties ?? {})) {
    if (rule.pattern !== undefined) {
      const why = regexProblem(rule.pattern);
      if (why) problems.push({ field: `body.fieldRules.properties.${name}.pattern`, reason: why });
    }
    if (rule.minLength !== undefined && rule.maxLength !== undefined && rule.minLength > rule.maxLength)
      problems.push({ field: `body.fieldRules.properties.${name}`, reason: 'minLength is greater than maxLength' });
    if (rule.minimum !== undefined && rule.maximum !== undefined && rule.minimum > rule.maximum)
      problems.push({ field: `body.fieldRules.properties.${name}`, reason: 'minimum is greater than maximum' });
  }
  return problems;
}

/** re2js for Ajv's `pattern` (Ajv's `code.regExp` option); `code` only names it in standalone code, which is not used. */
const linearRegExp = Object.assign((pattern: string) => compileRegex(pattern), { code: 'flagpostLinearRegExp' });

const ajv = new Ajv.default({ allErrors: true, strict: false, coerceTypes: true, code: { regExp: linearRegExp } });
addFormats.default(ajv, [...FIELD_FORMATS]);

/** Compiled validators of the rules seen lately, by their JSON text. */
const compiled = new Map<string, ValidateFunction>();
const COMPILED_MAX = 500;

/** The validator of a rules object seen before (a form's settings are parsed once per text, form.store.ts). */
const byIdentity = new WeakMap<FieldRules, ValidateFunction>();

function validatorOf(rules: FieldRules): ValidateFunction {
  const known = byIdentity.get(rules);
  if (known) return known;
  const key = JSON.stringify(rules);
  const found = compiled.get(key);
  if (found) {
    byIdentity.set(rules, found);
    return found;
  }
  // `required` is checked here, to tell a missing field from an empty one, as Formspree does.
  const { required: _required, ...schema } = rules;
  const validate = ajv.compile({ ...schema, type: 'object' });
  if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, validate);
  byIdentity.set(rules, validate);
  return validate;
}

/** Text that says nothing: an empty or blank string, or a list of them (an unused input of an HTML form). */
const isBlank = (value: unknown): boolean =>
  value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.every(isBlank));

const problemText = (key: MessageKey, params: Record<string, string | number> = {}) => message(key, params);

/**
 * The fields of `data` that break `rules`, one entry per field (its first problem). Blank values count as
 * absent, so an optional field left empty passes; a required one is REQUIRED_FIELD_EMPTY. `fileFields`
 * are the names that carried files: they are present, and are no text to check.
 */
export function checkFields(rules: FieldRules, data: Record<string, unknown>, fileFields: readonly string[] = []): FieldError[] {
  const errors = new Map<string, FieldError>();
  const add = (error: FieldError) => {
    if (!errors.has(error.field)) errors.set(error.field, error);
  };
  const view: Record<string, unknown> = {};
  // Ajv coerces in place ("5" to 5 for a number): the view is a copy, with copies of lists and objects.
  for (const [name, value] of Object.entries(data)) {
    if (!isBlank(value)) view[name] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
  }
  for (const name of rules.required ?? []) {
    if (Object.hasOwn(view, name) || fileFields.includes(name)) continue;
    if (Object.hasOwn(data, name)) add({ field: name, code: 'REQUIRED_FIELD_EMPTY', message: problemText('fieldRequiredEmpty') });
    else add({ field: name, code: 'REQUIRED_FIELD_MISSING', message: problemText('fieldRequiredMissing') });
  }
  const fileSet = new Set(fileFields);
  const validate = validatorOf(rules);
  if (!validate(view)) {
    for (const error of validate.errors ?? []) {
      const found = fieldErrorOf(error, rules);
      if (found && !fileSet.has(found.field)) add(found);
    }
  }
  return [...errors.values()];
}

function fieldErrorOf(error: ErrorObject, rules: FieldRules): FieldError | undefined {
  const pointer = error.instancePath.split('/')[1];
  if (error.keyword === 'additionalProperties') {
    const field = (error.params as { additionalProperty: string }).additionalProperty;
    return { field, code: 'UNKNOWN_FIELD', message: problemText('fieldUnknown') };
  }
  if (pointer === undefined) return undefined;
  const field = pointer.replace(/~1/g, '/').replace(/~0/g, '~');
  const rule = rules.properties?.[field] ?? {};
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      if (rule.type === 'number' || rule.type === 'integer') return { field, code: 'TYPE_NUMERIC', message: problemText('fieldNumeric') };
      if (rule.type === 'boolean') return { field, code: 'TYPE_BOOLEAN', message: problemText('fieldBoolean') };
      return { field, code: 'TYPE_TEXT', message: problemText('fieldText') };
    case 'format':
      if (rule.format === 'email') return { field, code: 'TYPE_EMAIL', message: problemText('fieldEmail') };
      if (rule.format === 'uri') return { field, code: 'TYPE_URL', message: problemText('fieldUrl') };
      return { field, code: 'TYPE_DATE', message: problemText('fieldDate') };
    case 'minLength':
      return { field, code: 'TOO_SHORT', message: problemText('fieldTooShort', { min: Number(params.limit) }) };
    case 'maxLength':
      return { field, code: 'TOO_LONG', message: problemText('fieldTooLong', { max: Number(params.limit) }) };
    case 'pattern':
      return { field, code: 'PATTERN_MISMATCH', message: problemText('fieldPattern') };
    case 'enum':
      return { field, code: 'NOT_ALLOWED_VALUE', message: problemText('fieldNotAllowed') };
    case 'minimum':
      return { field, code: 'TOO_SMALL', message: problemText('fieldTooSmall', { min: Number(params.limit) }) };
    case 'maximum':
      return { field, code: 'TOO_LARGE', message: problemText('fieldTooLarge', { max: Number(params.limit) }) };
    default:
      return { field, code: 'TYPE_TEXT', message: problemText('fieldText') };
  }
}
