import type { Condition, Operator } from '../api.ts';

// How the dashboard shows and edits a condition: operators with human labels, and the values as text
// (comma-separated where an operator takes several), typed back before they are sent.

export const OPERATORS: ReadonlyArray<{ value: Operator; label: string }> = [
  { value: 'equals', label: 'equals' },
  { value: 'in', label: 'is one of' },
  { value: 'startsWith', label: 'starts with' },
  { value: 'endsWith', label: 'ends with' },
  { value: 'contains', label: 'contains' },
  { value: 'lt', label: '<' },
  { value: 'lte', label: '<=' },
  { value: 'gt', label: '>' },
  { value: 'gte', label: '>=' },
  { value: 'semverEq', label: 'semver =' },
  { value: 'semverLt', label: 'semver <' },
  { value: 'semverLte', label: 'semver <=' },
  { value: 'semverGt', label: 'semver >' },
  { value: 'semverGte', label: 'semver >=' },
  { value: 'semverCaret', label: 'semver ^ (compatible)' },
  { value: 'semverTilde', label: 'semver ~ (same minor)' },
  { value: 'before', label: 'before (date)' },
  { value: 'after', label: 'after (date)' },
  { value: 'exists', label: 'exists' },
  { value: 'inCidr', label: 'IP in CIDR' },
  { value: 'matches', label: 'matches regex' },
  { value: 'rollout', label: 'in rollout %' },
];

export const operatorLabel = (op: string): string => OPERATORS.find((o) => o.value === op)?.label ?? op;

/** Operators that compare strings and so take the case-insensitive option. */
export const CASE_OPERATORS: ReadonlySet<Operator> = new Set(['equals', 'in', 'startsWith', 'endsWith', 'contains']);
/** Operators that take a list of values; every other one takes one (or none for `exists`). */
export const LIST_OPERATORS: ReadonlySet<Operator> = new Set(['equals', 'in', 'inCidr', 'rollout']);
const NUMBER_OPERATORS: ReadonlySet<Operator> = new Set(['lt', 'lte', 'gt', 'gte']);

export type ValueType = 'string' | 'number' | 'boolean';

/** A condition being edited: values as the text typed. */
export interface ConditionDraft {
  attribute: string;
  operator: Operator;
  negate: boolean;
  caseInsensitive: boolean;
  /** For equals and is one of: how the typed values are read. */
  valueType: ValueType;
  text: string;
}

export const emptyCondition = (): ConditionDraft => ({
  attribute: '',
  operator: 'equals',
  negate: false,
  caseInsensitive: false,
  valueType: 'string',
  text: '',
});

/** A comma inside a value is written `\,` (and a backslash `\\`). */
const escapeValue = (v: string | number | boolean) => String(v).replace(/\\/g, '\\\\').replace(/,/g, '\\,');

export function toDraft(c: Condition): ConditionDraft {
  const first = c.values[0];
  const valueType: ValueType = typeof first === 'number' ? 'number' : typeof first === 'boolean' ? 'boolean' : 'string';
  return {
    attribute: c.attribute,
    operator: c.operator,
    negate: c.negate === true,
    caseInsensitive: c.caseInsensitive === true,
    valueType,
    text: LIST_OPERATORS.has(c.operator) ? c.values.map(escapeValue).join(', ') : c.values.map(String).join(''),
  };
}

/** Splits at commas that are not escaped; trims each part; drops empty parts. */
export function splitValues(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (ch === ',') {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/** The type the values of this operator are sent with. */
export function typeOf(d: Pick<ConditionDraft, 'operator' | 'valueType'>): ValueType {
  if (NUMBER_OPERATORS.has(d.operator)) return 'number';
  return d.operator === 'equals' || d.operator === 'in' ? d.valueType : 'string';
}

/** The condition to send, or the problem of its values in words. */
export function fromDraft(d: ConditionDraft): { condition: Condition; problem?: undefined } | { problem: string; condition?: undefined } {
  const base: Condition = { attribute: d.attribute.trim(), operator: d.operator, values: [] };
  if (d.negate) base.negate = true;
  if (d.caseInsensitive && CASE_OPERATORS.has(d.operator)) base.caseInsensitive = true;
  if (d.operator === 'exists') return { condition: base };
  // A regular expression or a single string keeps its spaces and commas as typed.
  const raw = LIST_OPERATORS.has(d.operator) ? splitValues(d.text) : d.operator === 'matches' ? [d.text] : [d.text.trim()];
  if (raw.length === 0 || raw.some((r) => r === '')) return { problem: LIST_OPERATORS.has(d.operator) ? 'Enter at least one value' : 'Enter a value' };
  const type = typeOf(d);
  const values: Array<string | number | boolean> = [];
  if (d.operator === 'rollout') {
    // [upTo, groupId, above?, modulus?, seed?]: every operand but the group id is a number.
    for (const [i, r] of raw.entries()) {
      if (i === 1) values.push(r);
      else if (Number.isInteger(Number(r))) values.push(Number(r));
      else return { problem: `${r} is not a whole number` };
    }
    return raw.length < 2 ? { problem: 'Enter the percentage and the group id' } : { condition: { ...base, values } };
  }
  for (const r of raw) {
    if (type === 'number') {
      const n = Number(r);
      if (!Number.isFinite(n)) return { problem: `${r} is not a number` };
      values.push(n);
    } else if (type === 'boolean') {
      if (r !== 'true' && r !== 'false') return { problem: `${r} is not true or false` };
      values.push(r === 'true');
    } else values.push(r);
  }
  return { condition: { ...base, values } };
}

/** The condition in one line, for lists and explanations: `user.country is one of DE, FR`. */
export function describeCondition(c: Condition): string {
  const op = `${c.negate ? 'not ' : ''}${operatorLabel(c.operator)}${c.caseInsensitive ? ' (any case)' : ''}`;
  return c.operator === 'exists' ? `${c.attribute} ${op}` : `${c.attribute} ${op} ${c.values.map((v) => String(v)).join(', ')}`;
}
