// Targeting engine figures (issue 18), in-process, no HTTP: compile and rebuild times for a large
// environment, bulk and single evaluation with rules against the same flags without. Prints numbers
// and ratios; run with `npm run bench:targeting-engine` (the HTTP figures: `npm run bench:targeting`).
import { compileEnvironment } from '../src/targeting/engine.ts';
import { CURRENT_BUCKETING, type Rule, type Segment, type TargetedFlag } from '../src/targeting/targeting.ts';

const segments: Segment[] = [
  {
    key: 'staff',
    name: 'Staff',
    description: '',
    match: 'any',
    conditions: [
      { attribute: 'email', operator: 'endsWith', values: ['@corp.com'] },
      { attribute: 'staff', operator: 'equals', values: [true] },
    ],
  },
];

function targeted(key: string, i: number): TargetedFlag {
  const rules: Rule[] = [
    {
      id: 'r1',
      name: 'EU pro',
      enabled: true,
      conditions: [
        { attribute: 'country', operator: 'in', values: ['fr', 'de', `x${i}`] },
        { attribute: 'plan', operator: 'equals', values: ['pro'] },
      ],
      segments: [],
      serve: { variant: 'on' },
    },
    {
      id: 'r2',
      name: 'Staff on new app',
      enabled: true,
      conditions: [{ attribute: 'app', operator: 'semverGte', values: [`2.${i % 10}.0`] }],
      segments: ['staff'],
      serve: { variant: 'on' },
    },
    {
      id: 'r3',
      name: 'Rollout',
      enabled: true,
      conditions: [],
      segments: [],
      serve: {
        split: {
          bucketing: CURRENT_BUCKETING,
          weights: [
            { variant: 'on', weight: 25 },
            { variant: 'off', weight: 75 },
          ],
        },
      },
    },
  ];
  return { key, type: 'boolean', targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off', prerequisites: [], rules } };
}
const untargeted = (f: TargetedFlag): TargetedFlag => ({ ...f, targeting: { ...f.targeting, rules: [] } });

const context = {
  targetingKey: 'user-42',
  country: 'es',
  plan: 'free',
  app: '1.9.0',
  email: 'ann@example.org',
  staff: false,
  age: 31,
  org: 'o-7',
  device: 'ios',
  locale: 'es-ES',
};

function opsPerSecond(fn: () => void, ms = 1500): number {
  for (let i = 0; i < 2000; i++) fn();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
  }
  return n / ((performance.now() - start) / 1000);
}

const big = Array.from({ length: 5000 }, (_, i) => targeted(`flag-${i}`, i));
let t = performance.now();
const env = compileEnvironment(big, segments);
const compileMs = performance.now() - t;
t = performance.now();
env.evaluateAll(context);
const firstBulkMs = performance.now() - t;
const rebuilds: number[] = [];
const rebuildsCopied: number[] = [];
let kept = big;
let byIdentity = env;
let byContent = env;
for (let r = 0; r < 5; r++) {
  // A store that keeps the unchanged flag objects: they are reused by identity.
  kept = kept.map((f, i) => (i === 123 ? targeted(f.key, 10_000 + r) : f));
  t = performance.now();
  byIdentity = compileEnvironment(kept, segments, { previous: byIdentity });
  byIdentity.evaluate('flag-123', context);
  rebuilds.push(performance.now() - t);
  // A store that rebuilds every object from rows: they are reused after a comparison of contents.
  const copy = kept.map((f) => structuredClone(f));
  t = performance.now();
  byContent = compileEnvironment(copy, segments, { previous: byContent });
  byContent.evaluate('flag-123', context);
  rebuildsCopied.push(performance.now() - t);
}
const rss = process.memoryUsage().rss / 1024 / 1024;

const twenty = big.slice(0, 20).map((f) => structuredClone(f));
const rulesEnv = compileEnvironment(twenty, segments);
const staticEnv = compileEnvironment(twenty.map(untargeted), segments);
const bulkRules = opsPerSecond(() => rulesEnv.evaluateAll(context));
const bulkStatic = opsPerSecond(() => staticEnv.evaluateAll(context));
const singleRules = opsPerSecond(() => rulesEnv.evaluate('flag-7', context));
const singleStatic = opsPerSecond(() => staticEnv.evaluate('flag-7', context));

const fmt = (n: number) => Math.round(n).toLocaleString('en');
console.log(`5,000 flags x 3 rules: compile ${compileMs.toFixed(0)} ms (flagd-core objects built lazily), first bulk evaluation ${firstBulkMs.toFixed(0)} ms`);
console.log(`rebuild after one change, unchanged flag objects kept (changed flag evaluated): ${rebuilds.map((x) => x.toFixed(0)).join(', ')} ms`);
console.log(`rebuild after one change, every flag object new (compared by content): ${rebuildsCopied.map((x) => x.toFixed(0)).join(', ')} ms`);
console.log(`RSS with the 5,000-flag environment compiled and evaluated: ${rss.toFixed(0)} MiB`);
console.log(`bulk, 20 flags, 10-attribute context: with rules ${fmt(bulkRules)}/s, without ${fmt(bulkStatic)}/s (engine only, no HTTP)`);
console.log(`single flag: with rules ${fmt(singleRules)}/s, without ${fmt(singleStatic)}/s (engine only, no HTTP)`);
