import { TIMESTAMP_ATTRIBUTE } from './conditions.ts';
import { CURRENT_BUCKETING, type Condition, type Operator, type Rule, type Serve, type Split } from './targeting.ts';

// The inverse of compile.ts for the shapes it emits: JSON Logic read back as typed conditions, splits
// and rules. Readers are allowed to be generous; flagd-import.ts keeps a reading only when compiling
// it again gives the same JSON Logic, so a reading never changes what a definition means.

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isPrimitive = (v: Json): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v);

/** The single operator of a JSON Logic operation, or undefined. */
export function operation(logic: Json): [string, Json] | undefined {
  if (!isObject(logic)) return undefined;
  const keys = Object.keys(logic);
  return keys.length === 1 ? [keys[0]!, logic[keys[0]!]] : undefined;
}

const varName = (v: Json): string | undefined => {
  const op = operation(v);
  return op && op[0] === 'var' && typeof op[1] === 'string' ? op[1] : undefined;
};

const SEMVER_BY_SYMBOL: Record<string, Operator> = {
  '=': 'semverEq',
  '<': 'semverLt',
  '<=': 'semverLte',
  '>': 'semverGt',
  '>=': 'semverGte',
  '^': 'semverCaret',
  '~': 'semverTilde',
};
const NUMBER_BY_SYMBOL: Record<string, Operator> = { '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' };

/** A condition from its compiled JSON Logic, or undefined. */
export function readCondition(logic: Json): Condition | undefined {
  const op = operation(logic);
  if (!op) return undefined;
  const [name, args] = op;
  if (name === '!') {
    const inner = readCondition(args);
    return inner && inner.negate !== true ? { ...inner, negate: true } : undefined;
  }
  if (!Array.isArray(args)) return undefined;
  const attr = varName(args[0]);
  const c = (attribute: string, operator: Operator, values: Condition['values']): Condition => ({ attribute, operator, values });
  switch (name) {
    case '===':
      return attr !== undefined && args.length === 2 && isPrimitive(args[1]) ? c(attr, 'equals', [args[1]]) : undefined;
    case 'in': {
      if (args.length !== 2) return undefined;
      if (attr !== undefined && Array.isArray(args[1]) && args[1].every(isPrimitive)) return c(attr, 'in', args[1] as Condition['values']);
      const contained = varName(args[1]);
      return contained !== undefined && typeof args[0] === 'string' ? c(contained, 'contains', [args[0]]) : undefined;
    }
    case 'starts_with':
    case 'ends_with':
      return attr !== undefined && args.length === 2 && typeof args[1] === 'string'
        ? c(attr, name === 'starts_with' ? 'startsWith' : 'endsWith', [args[1]])
        : undefined;
    case '!==':
      return attr !== undefined && args.length === 2 && args[1] === null ? c(attr, 'exists', []) : undefined;
    case '<':
    case '>':
      if (attr !== TIMESTAMP_ATTRIBUTE || args.length !== 2 || typeof args[1] !== 'number') return undefined;
      return c(attr, name === '<' ? 'before' : 'after', [new Date(args[1] * 1000).toISOString()]);
    case 'sem_ver': {
      const operator = SEMVER_BY_SYMBOL[String(args[1])];
      return attr !== undefined && args.length === 3 && operator && typeof args[2] === 'string' ? c(attr, operator, [args[2]]) : undefined;
    }
    case 'and': {
      if (args.length !== 2) return undefined;
      const guard = readCondition(args[0]);
      const cmp = operation(args[1]);
      if (!guard || guard.operator !== 'exists' || guard.negate || !cmp || !Array.isArray(cmp[1])) return undefined;
      const operator = NUMBER_BY_SYMBOL[cmp[0]];
      const [a, n] = cmp[1];
      return operator && varName(a) === guard.attribute && typeof n === 'number' ? c(guard.attribute, operator, [n]) : undefined;
    }
    default:
      return undefined;
  }
}

/** A segment's match and conditions from its `$evaluators` logic, or undefined. */
export function readSegment(logic: Json): { match: 'all' | 'any'; conditions: Condition[] } | undefined {
  const op = operation(logic);
  if (!op || (op[0] !== 'and' && op[0] !== 'or') || !Array.isArray(op[1]) || op[1].length === 0) return undefined;
  const conditions = op[1].map(readCondition);
  if (conditions.some((c) => c === undefined)) return undefined;
  return { match: op[0] === 'and' ? 'all' : 'any', conditions: conditions as Condition[] };
}

function readSplit(logic: Json): Split | undefined {
  const op = operation(logic);
  if (!op) return undefined;
  let bucketBy: string | undefined;
  let args: Json = op[1];
  if (op[0] === 'if') {
    if (!Array.isArray(args) || args.length !== 3 || args[1] !== null) return undefined;
    const missing = operation(args[0]);
    const inner = operation(args[2]);
    if (!missing || missing[0] !== 'missing' || !Array.isArray(missing[1]) || typeof missing[1][0] !== 'string') return undefined;
    if (!inner || inner[0] !== 'fractional' || !Array.isArray(inner[1])) return undefined;
    bucketBy = missing[1][0];
    args = inner[1].slice(1);
  } else if (op[0] !== 'fractional') return undefined;
  if (!Array.isArray(args) || args.length === 0) return undefined;
  const weights: Split['weights'] = [];
  for (const entry of args) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') return undefined;
    weights.push({ variant: entry[0], weight: entry[1] });
  }
  return bucketBy === undefined ? { bucketing: CURRENT_BUCKETING, weights } : { bucketing: CURRENT_BUCKETING, bucketBy, weights };
}

function readServe(logic: Json): Serve | undefined {
  if (typeof logic === 'string') return { variant: logic };
  const split = readSplit(logic);
  return split ? { split } : undefined;
}

function readRuleCondition(logic: Json): { conditions: Condition[]; segments: string[] } | undefined {
  if (logic === true) return { conditions: [], segments: [] };
  const single = readItem(logic);
  if (single) return single;
  const op = operation(logic);
  if (!op || op[0] !== 'and' || !Array.isArray(op[1]) || op[1].length < 2) return undefined;
  const out = { conditions: [] as Condition[], segments: [] as string[] };
  for (const item of op[1]) {
    const read = readItem(item);
    if (!read) return undefined;
    out.conditions.push(...read.conditions);
    out.segments.push(...read.segments);
  }
  return out;
}

function readItem(logic: Json): { conditions: Condition[]; segments: string[] } | undefined {
  const op = operation(logic);
  if (op && op[0] === '$ref' && typeof op[1] === 'string') return { conditions: [], segments: [op[1]] };
  const c = readCondition(logic);
  return c ? { conditions: [c], segments: [] } : undefined;
}

/** Rules from a compiled `if` chain (`{"if": [c0, serve0, c1, serve1, ..., null]}`), or undefined. */
export function readRules(logic: Json): Rule[] | undefined {
  const op = operation(logic);
  if (!op || op[0] !== 'if' || !Array.isArray(op[1])) return undefined;
  const args = op[1];
  if (args.length < 3 || args.length % 2 === 0 || args[args.length - 1] !== null) return undefined;
  const rules: Rule[] = [];
  for (let i = 0; i + 1 < args.length; i += 2) {
    const when = readRuleCondition(args[i]);
    const serve = readServe(args[i + 1]);
    if (!when || !serve) return undefined;
    const n = rules.length + 1;
    rules.push({ id: `rule-${n}`, name: `Rule ${n}`, enabled: true, ...when, serve });
  }
  return rules;
}
