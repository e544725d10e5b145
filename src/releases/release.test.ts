import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  breachReason,
  type GuardrailReading,
  holdEndsAt,
  nextMove,
  pauseProgress,
  planProblems,
  type ReleaseState,
  releaseRule,
  resumeProgress,
} from './release.ts';

const T0 = '2026-11-27T10:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000);
const plan = [{ percent: 5, holdSeconds: 3600 }, { percent: 25, holdSeconds: 7200, approval: true }, { percent: 100 }];
const running = (currentStep: number, extra: Partial<ReleaseState> = {}): ReleaseState => ({
  status: 'running',
  steps: plan,
  currentStep,
  progress: plan.map((_, i) => (i <= currentStep ? { startedAt: T0 } : {})),
  ...extra,
});
const healthy: GuardrailReading = { state: 'healthy' };

describe('nextMove: what a release does next', () => {
  const rows: Array<[string, ReleaseState, number, GuardrailReading[], ReturnType<typeof nextMove>]> = [
    ['holds a step until its hold has passed', running(0), 3599, [healthy], { kind: 'none', waitingFor: 'time' }],
    ['waits for approval before an approval step', running(0), 3600, [healthy], { kind: 'wait_approval', step: 1 }],
    [
      'starts an approved approval step',
      running(0, { progress: [{ startedAt: T0 }, { approvedBy: 'ann' }, {}] }),
      3600,
      [healthy],
      { kind: 'start_step', step: 1 },
    ],
    ['starts a step without approval when the hold has passed', running(1), 7200, [healthy], { kind: 'start_step', step: 2 }],
    ['completes after the last step', running(2), 0, [healthy], { kind: 'complete' }],
    ['never ends a step on time alone while a guardrail collects', running(2), 99999, [{ state: 'collecting' }], { kind: 'none', waitingFor: 'users' }],
    [
      'holds the step while a guardrail is unknown',
      running(2),
      99999,
      [{ state: 'unknown', reason: 'unreachable' }],
      { kind: 'none', waitingFor: 'guardrail' },
    ],
    [
      'rolls back on a breach at once, before the hold',
      running(0),
      1,
      [healthy, { state: 'breached', reason: 'errors rose' }],
      { kind: 'rollback', reason: 'errors rose' },
    ],
    ['does not move a paused release', running(2, { status: 'paused' }), 99999, [healthy], { kind: 'none' }],
    ['does not move a release waiting for approval', running(0, { status: 'waiting_approval' }), 99999, [healthy], { kind: 'none' }],
    ['does not move an ended release', running(2, { status: 'rolled_back' }), 99999, [{ state: 'breached' }], { kind: 'none' }],
    ['completes a release without guardrails', running(2), 0, [], { kind: 'complete' }],
  ];
  for (const [name, release, seconds, readings, expected] of rows) {
    it(name, () => assert.deepEqual(nextMove(release, at(seconds), readings), expected));
  }

  it('names the breached guardrail when its reading gives no reason', () => {
    assert.deepEqual(nextMove(running(0), at(0), [{ state: 'breached' }], ['error-rate']), { kind: 'rollback', reason: 'error-rate was breached' });
  });
});

describe('planProblems: what a plan may be', () => {
  const variants = ['on', 'off'];
  const rows: Array<[string, Parameters<typeof planProblems>[0], string[]]> = [
    ['accepts the issue example', { variant: 'on', baseline: 'off', steps: plan, guardrails: [{ metric: 'error-rate', minUsers: 500 }] }, []],
    [
      'refuses an unknown variant',
      { variant: 'blue', baseline: 'off', steps: [{ percent: 100 }], guardrails: [] },
      ["variant: the flag has no variant 'blue'"],
    ],
    ['refuses the same variant twice', { variant: 'on', baseline: 'on', steps: [{ percent: 100 }], guardrails: [] }, ['baseline: must differ from variant']],
    ['refuses no step', { variant: 'on', baseline: 'off', steps: [], guardrails: [] }, ['steps: at least one step is needed']],
    [
      'refuses percentages that do not grow',
      { variant: 'on', baseline: 'off', steps: [{ percent: 50 }, { percent: 50 }, { percent: 100 }], guardrails: [] },
      ['steps[1].percent: must be more than the step before'],
    ],
    [
      'refuses a plan that never reaches everyone',
      { variant: 'on', baseline: 'off', steps: [{ percent: 50 }], guardrails: [] },
      ['steps[0].percent: the last step serves 100 percent'],
    ],
    [
      'refuses a Prometheus guardrail without a threshold',
      { variant: 'on', baseline: 'off', steps: [{ percent: 100 }], guardrails: [{ prometheus: { url: 'http://127.0.0.1:9090', query: 'up' } }] },
      ['guardrails[0].prometheus: exactly one of above and below'],
    ],
  ];
  for (const [name, input, expected] of rows) it(name, () => assert.deepEqual(planProblems(input, variants), expected));
});

describe('releaseRule', () => {
  it('serves the variant first, so that a user who got it keeps it as the share grows', () => {
    const rule = releaseRule('r1', 'on', 'off', 25);
    assert.deepEqual(rule.serve, {
      split: {
        bucketing: 'flagd-fractional-v2',
        weights: [
          { variant: 'on', weight: 25 },
          { variant: 'off', weight: 75 },
        ],
      },
    });
    assert.equal(rule.id, 'release-r1');
    assert.deepEqual(rule.conditions, []);
  });
});

describe('breachReason', () => {
  it('says what rose, from what to what, with the lift and its interval', () => {
    assert.equal(breachReason('error-rate', 'proportion', 0.051, 0.298, 4.84, [3.8, 5.9]), 'error-rate rose from 5.1 % to 29.8 %, +484 % (+380 % to +590 %)');
    assert.equal(breachReason('order-value', 'mean', 40, 31.5, -0.2125, [-0.3, -0.1]), 'order-value fell from 40 to 31.5, -21.3 % (-30 % to -10 %)');
  });
});

describe('pauses stop the hold clock', () => {
  const iso = (seconds: number) => at(seconds).toISOString();
  it('adds the paused time to the hold, the pause in course counting up to now', () => {
    const step = { percent: 5, holdSeconds: 3600 };
    const started = { startedAt: T0 };
    assert.equal(holdEndsAt(T0, step, started), at(3600).getTime());
    const paused = pauseProgress(started, iso(600));
    assert.equal(paused.pausedAt, iso(600));
    // While paused the end moves on with the clock.
    assert.equal(holdEndsAt(T0, step, paused, at(1600)), at(4600).getTime());
    const resumed = resumeProgress(paused, iso(2400));
    assert.deepEqual(resumed, { startedAt: T0, pausedMs: 1_800_000 });
    assert.equal(holdEndsAt(T0, step, resumed, at(9999)), at(5400).getTime());
    // A second pause adds to the first.
    const again = resumeProgress(pauseProgress(resumed, iso(3000)), iso(3100));
    assert.equal(again.pausedMs, 1_900_000);
  });

  it("leaves a step that has not started, or has ended, as it is; a paused step's release waits longer", () => {
    assert.deepEqual(pauseProgress({}, iso(10)), {});
    assert.deepEqual(pauseProgress({ startedAt: T0, completedAt: iso(5) }, iso(10)), { startedAt: T0, completedAt: iso(5) });
    assert.deepEqual(resumeProgress({ startedAt: T0 }, iso(10)), { startedAt: T0 });
    const release = running(0, { progress: [{ startedAt: T0, pausedMs: 600_000 }, {}, {}] });
    assert.deepEqual(nextMove(release, at(3700), [healthy]), { kind: 'none', waitingFor: 'time' });
    assert.deepEqual(nextMove(release, at(4200), [healthy]), { kind: 'wait_approval', step: 1 });
  });
});
