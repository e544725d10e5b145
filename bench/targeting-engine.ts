// Targeting engine figures (issue 18), in-process, no HTTP: compile and rebuild times for a large
// environment, bulk and single evaluation with rules against the same flags without. Prints numbers
// and ratios; run with `npm run bench:targeting-engine` (the HTTP figures: `npm run bench:targeting`).
import type { Flag } from '../src/flags/flag.ts';
import { buildSnapshot } from '../src/evaluation/flag.snapshot.ts';
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

// BENCH_MS shortens each throughput measurement (default 1500 ms) for a trial run.
const MEASURE_MS = Number(process.env.BENCH_MS ?? 1500);
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** Operations per second of wall time and per second of this process's CPU time (less sensitive to a loaded machine). */
function opsPerSecond(fn: () => void, ms = MEASURE_MS): { wall: number; cpu: number } {
  for (let i = 0; i < 2000; i++) fn();
  let n = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  while (performance.now() - start < ms) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
  }
  return { wall: n / ((performance.now() - start) / 1000), cpu: n / (cpuMs(cpu) / 1000) };
}

const big = Array.from({ length: 5000 }, (_, i) => targeted(`flag-${i}`, i));
let t = performance.now();
let c = process.cpuUsage();
const env = compileEnvironment(big, segments);
const compileMs = performance.now() - t;
const compileCpu = cpuMs(c);
t = performance.now();
c = process.cpuUsage();
env.evaluateAll(context);
const firstBulkMs = performance.now() - t;
const firstBulkCpu = cpuMs(c);
const rebuilds: number[] = [];
const rebuildsCopied: number[] = [];
const rebuildsCopiedCpu: number[] = [];
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
  c = process.cpuUsage();
  byContent = compileEnvironment(copy, segments, { previous: byContent });
  byContent.evaluate('flag-123', context);
  rebuildsCopied.push(performance.now() - t);
  rebuildsCopiedCpu.push(cpuMs(c));
}
const rss = process.memoryUsage().rss / 1024 / 1024;

// The read model's whole snapshot (buildSnapshot: compile, ready answers, version) from flags as the
// store loads them, every object new on each load, after one change.
const asStored = (f: TargetedFlag, i: number, updatedAt: string): Flag => ({
  id: `id-${i}`,
  version: 1,
  projectId: 'p',
  environmentId: 'e',
  slug: f.key,
  type: f.type,
  enabled: false,
  targeting: f.targeting,
  payload: null,
  expiredAt: null,
  description: '',
  isPreview: false,
  previewName: null,
  previewContent: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt,
});
let stored = big.map((f, i) => asStored(f, i, '2026-01-01T00:00:00.000Z'));
t = performance.now();
c = process.cpuUsage();
let snapshot = buildSnapshot({ environmentId: 'e', flags: structuredClone(stored), segments: structuredClone(segments) });
const snapshotMs = performance.now() - t;
const snapshotCpu = cpuMs(c);
const snapshotRebuilds: number[] = [];
const snapshotRebuildsCpu: number[] = [];
for (let r = 0; r < 5; r++) {
  stored = stored.map((f, i) => (i === 123 ? asStored(targeted(f.slug, 20_000 + r), i, `2026-01-02T00:00:0${r}.000Z`) : f));
  const loaded = { environmentId: 'e', flags: structuredClone(stored), segments: structuredClone(segments) };
  t = performance.now();
  c = process.cpuUsage();
  snapshot = buildSnapshot(loaded, { previous: snapshot });
  snapshot.compiled.evaluate('flag-123', context);
  snapshotRebuilds.push(performance.now() - t);
  snapshotRebuildsCpu.push(cpuMs(c));
}

const twenty = big.slice(0, 20).map((f) => structuredClone(f));
const rulesEnv = compileEnvironment(twenty, segments);
const staticEnv = compileEnvironment(twenty.map(untargeted), segments);
const bulkRules = opsPerSecond(() => rulesEnv.evaluateAll(context));
const bulkStatic = opsPerSecond(() => staticEnv.evaluateAll(context));
const singleRules = opsPerSecond(() => rulesEnv.evaluate('flag-7', context));
const singleStatic = opsPerSecond(() => staticEnv.evaluate('flag-7', context));

const fmt = (n: number) => Math.round(n).toLocaleString('en');
const us = (perSecond: number) => (1e6 / perSecond).toFixed(1);
const rate = (r: { wall: number; cpu: number }) => `${fmt(r.wall)}/s (${us(r.wall)} µs; CPU ${us(r.cpu)} µs)`;
const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
console.log(
  `5,000 flags x 3 rules: compile ${compileMs.toFixed(0)} ms (CPU ${compileCpu.toFixed(0)} ms), first bulk evaluation ${firstBulkMs.toFixed(0)} ms (CPU ${firstBulkCpu.toFixed(0)} ms)`,
);
console.log(`rebuild after one change, unchanged flag objects kept (changed flag evaluated): ${list(rebuilds)} ms`);
console.log(`rebuild after one change, every flag object new (compared by content): ${list(rebuildsCopied)} ms (CPU ${list(rebuildsCopiedCpu)} ms)`);
console.log(
  `buildSnapshot, 5,000 flags as loaded from the store: first ${snapshotMs.toFixed(0)} ms (CPU ${snapshotCpu.toFixed(0)} ms), after one change ${list(snapshotRebuilds)} ms (CPU ${list(snapshotRebuildsCpu)} ms)`,
);
console.log(`RSS with the 5,000-flag environment compiled and evaluated: ${rss.toFixed(0)} MiB`);
console.log(`bulk, 20 flags, 10-attribute context: with rules ${rate(bulkRules)}, without ${rate(bulkStatic)} (engine only, no HTTP)`);
console.log(`single flag: with rules ${rate(singleRules)}, without ${rate(singleStatic)} (engine only, no HTTP)`);
