// flagd's targeting schema (https://flagd.dev/schema/v0/targeting.json) as far as Flagpost checks it:
// which JSON Logic operators a definition may use. Shared by the import and by validation, so that JSON
// Logic written through the admin API is held to what a flagd import is.

/** The JSON Logic operators flagd's targeting schema allows (https://flagd.dev/schema/v0/targeting.json). */
const OPERATORS = new Set([
  'var',
  'missing',
  'missing_some',
  'if',
  '==',
  '===',
  '!=',
  '!==',
  '>',
  '>=',
  '<',
  '<=',
  '%',
  '/',
  'map',
  'filter',
  'all',
  'none',
  'some',
  'in',
  'reduce',
  '*',
  '!',
  '!!',
  'or',
  'and',
  '+',
  '-',
  'max',
  'min',
  'merge',
  'cat',
  'substr',
  'starts_with',
  'ends_with',
  'sem_ver',
  'fractional',
  '$ref',
]);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Where a JSON Logic value breaks flagd's targeting schema (relative path), or undefined. */
export function jsonLogicProblem(logic: unknown, path = ''): { path: string; message: string } | undefined {
  if (Array.isArray(logic)) {
    for (const [i, item] of logic.entries()) {
      const p = jsonLogicProblem(item, `${path}/${i}`);
      if (p) return p;
    }
    return undefined;
  }
  if (!isObject(logic)) return undefined;
  const keys = Object.keys(logic);
  if (keys.length === 0) return undefined;
  if (keys.length > 1) return { path, message: `a JSON Logic operation has one operator, found ${keys.join(', ')}` };
  const op = keys[0]!;
  if (!OPERATORS.has(op)) return { path, message: `unknown JSON Logic operator ${op}` };
  if (op === 'var' && typeof logic.var === 'string' && logic.var.startsWith('$flagd.') && !['$flagd.timestamp', '$flagd.flagKey'].includes(logic.var)) {
    return { path: `${path}/var`, message: 'flagd provides only $flagd.timestamp and $flagd.flagKey' };
  }
  if (op === '$ref' && typeof logic.$ref !== 'string') return { path: `${path}/$ref`, message: '$ref names an evaluator' };
  return jsonLogicProblem(logic[op], `${path}/${escape(op)}`);
}
