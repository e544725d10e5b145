// The worst single-flag evaluations the targeting limits allow (issue 29, docs/adr/0024): JSON Logic
// at the cost bound (nested iterators over literal arrays, iterators over the largest context), a
// flag with the most regular-expression states matched against the longest input, and typed rules at
// their limits. Each is one flag evaluated through the engine (flagd-core or Flagpost's closures, as
// in production), no HTTP. Prints the time of one evaluation (median of a few hundred) and the
// budget the limits promise; run with `npm run bench:targeting-worst-case`.
import { logicCost } from '../src/targeting/cost.ts';
import { compileEnvironment } from '../src/targeting/engine.ts';
import * as L from '../src/targeting/limits.ts';
import { type Condition, type Rule, type TargetedFlag } from '../src/targeting/targeting.ts';
import { environmentProblem } from '../src/targeting/validate.ts';

const lit = (n: number) => Array.from({ length: n }, (_, i) => i);
const flagOf = (key: string, targeting: Partial<TargetedFlag['targeting']>): TargetedFlag => ({
  key,
  type: 'string',
  targeting: { state: 'ENABLED', variants: { on: 'on', off: 'off' }, defaultVariant: 'off', prerequisites: [], rules: [], ...targeting },
});

/** The largest n for which build(n) stays within the cost bound. */
function largest(build: (n: number) => unknown): { n: number; logic: unknown; cost: number } {
  let n = 1;
  while (true) {
    const next = logicCost(build(n + 1));
    if ('message' in next || next.cost > L.MAX_LOGIC_COST) break;
    n++;
  }
  const logic = build(n);
  return { n, logic, cost: (logicCost(logic) as { cost: number }).cost };
}

function nested(depth: number) {
  return (n: number) => {
    let body: unknown = { '==': [{ var: '' }, -1] };
    for (let k = 0; k < depth; k++) body = { some: [lit(n), body] };
    return { if: [body, 'on', 'off'] };
  };
}
const contextArray = (n: number) => ({
  if: [{ some: [{ var: 'items' }, { and: lit(n).map((i) => ({ '!=': [{ var: '' }, `v${i}`] })) }] }, 'on', 'off'],
});
const reduceSum = () => ({ if: [{ '>': [{ reduce: [{ var: 'numbers' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }, 0] }, -1] }, 'on', 'off'] });

const context = {
  targetingKey: 'user-1',
  items: Array.from({ length: L.MAX_CONTEXT_ENTRIES - 10 }, (_, i) => `item-${i}`),
  numbers: [] as number[],
  text: 'a'.repeat(L.MAX_MATCH_INPUT_LENGTH),
};
const numbers = { ...context, items: [], numbers: lit(L.MAX_CONTEXT_ENTRIES - 10) };

// The most states one flag may have, in patterns that keep every state alive on its input.
const states = (n: number) => `[^x]{${n}}$`;
let width = 1;
while (states(width + 1) && (width + 2) * 2 - 1 <= L.MAX_REGEX_STATES) width++;
const regexCondition: Condition = { attribute: 'text', operator: 'matches', values: [states(width)] };
const typedRules = (condition: (r: number, c: number) => Condition): Rule[] =>
  Array.from({ length: L.MAX_RULES }, (_, r) => ({
    id: `r${r}`,
    name: '',
    enabled: true,
    conditions: Array.from({ length: L.MAX_CONDITIONS }, (_, c) => condition(r, c)),
    segments: [],
    serve: { variant: 'on' },
  }));
const values = (r: number, c: number) => Array.from({ length: L.MAX_VALUES }, (_, i) => `v${r}-${c}-${i}`);
const cidrs = (r: number, c: number) => Array.from({ length: L.MAX_VALUES }, (_, i) => `10.${(r * 7 + c) % 256}.${i % 256}.${Math.floor(i / 256)}/32`);

const cases: Array<{ name: string; flag: TargetedFlag; context: object }> = [];
for (const depth of [1, 2, 3]) {
  const { n, logic, cost } = largest(nested(depth));
  cases.push({
    name: `JSON Logic, ${depth} nested iterator(s) over literal arrays of ${n} (cost ${Math.round(cost)})`,
    flag: flagOf(`nested-${depth}`, { jsonLogic: logic as object }),
    context,
  });
}
{
  const { n, logic, cost } = largest(contextArray);
  cases.push({
    name: `JSON Logic, some over a ${context.items.length}-entry context array, ${n} tests per entry (cost ${Math.round(cost)})`,
    flag: flagOf('context', { jsonLogic: logic as object }),
    context,
  });
}
cases.push({ name: `JSON Logic, reduce over ${numbers.numbers.length} numbers`, flag: flagOf('reduce', { jsonLogic: reduceSum() }), context: numbers });
cases.push({
  name: `typed, one matches condition of ${width * 2 + 1} states (${states(width)}) on ${L.MAX_MATCH_INPUT_LENGTH} characters`,
  flag: flagOf('regex', { rules: [{ id: 'r', name: '', enabled: true, conditions: [regexCondition], segments: [], serve: { variant: 'on' } }] }),
  context,
});
cases.push({
  name: `typed, ${L.MAX_RULES} rules x ${L.MAX_CONDITIONS} in conditions of ${L.MAX_VALUES} values (none matches)`,
  flag: flagOf('in', { rules: typedRules((r, c) => ({ attribute: 'plan', operator: 'in', values: values(r, c) })) }),
  context: { ...context, plan: 'nope' },
});
cases.push({
  name: `typed, inCidr conditions with ${L.MAX_FLAG_CIDRS} CIDRs together (none matches)`,
  flag: flagOf('cidr', {
    rules: [
      {
        id: 'r',
        name: '',
        enabled: true,
        conditions: [{ attribute: 'ip', operator: 'inCidr', values: cidrs(0, 0).slice(0, L.MAX_FLAG_CIDRS) }],
        segments: [],
        serve: { variant: 'on' },
      },
    ],
  }),
  context: { ...context, ip: '192.168.1.1' },
});
cases.push({
  name: `typed, ${L.MAX_RULES} rules x ${L.MAX_CONDITIONS} semver conditions`,
  flag: flagOf('semver', { rules: typedRules((r, c) => ({ attribute: 'app', operator: 'semverGt', values: [`${r}.${c}.0`] })) }),
  context: { ...context, app: '0.0.1' },
});

for (const { name, flag, context: ctx } of cases) {
  const problem = environmentProblem([flag], []);
  if (problem) throw new Error(`${name}: refused by validation (${problem.path}: ${problem.message})`);
  const env = compileEnvironment([flag], []);
  // The first evaluation compiles the flag (json-logic-engine computes subtrees that read no context then).
  const compiling = performance.now();
  const first = env.evaluate(flag.key, ctx)!;
  const firstMs = performance.now() - compiling;
  if (first.reason === 'ERROR') throw new Error(`${name}: ${first.errorDetails}`);
  const times: number[] = [];
  const start = performance.now();
  while (times.length < 300 && performance.now() - start < 3000) {
    const t = performance.now();
    env.evaluate(flag.key, ctx);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  const worst = times[times.length - 1]!;
  console.log(
    `${name}: ${(median * 1000).toFixed(0)} µs per evaluation (slowest of ${times.length}: ${(worst * 1000).toFixed(0)} µs; first, compiling: ${(firstMs * 1000).toFixed(0)} µs)`,
  );
}
