import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import {
  allDeliveries,
  type AttemptResult,
  type Claimed,
  DeliveryLoop,
  type DeliveryLoopOptions,
  type DeliveryOutcome,
  type DeliveryQueue,
  JobLoop,
  type JobLoopOptions,
} from './delivery-loop.ts';
import { retryDelayMs } from './delivery.ts';

// The delivery loop shared by the outbox, project webhooks and change-request e-mails, alone: no
// database, no timer of its own (node:test's mock timers stand in for setTimeout where the poll matters).

const quiet = { warn() {}, info() {}, error() {} };

/** A turn of the event loop: what a wake queued has started, and the promises before it have settled. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A job whose runs wait for `gate` while it is set, and fail while `failures` is positive. */
class TestJob extends JobLoop {
  runs = 0;
  inFlight = 0;
  maxInFlight = 0;
  gate: Promise<void> | undefined;
  failures = 0;

  constructor(options: Partial<JobLoopOptions> = {}) {
    super({ name: 'test job', log: quiet, pollMs: 1000, ...options });
  }

  protected async runDue(): Promise<number> {
    this.runs++;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.gate;
      if (this.failures > 0) {
        this.failures--;
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      }
      return this.runs;
    } finally {
      this.inFlight--;
    }
  }
}

describe('JobLoop', () => {
  afterEach(() => mock.timers.reset());

  it('serialises runs: a run waits for the one in flight', async () => {
    const job = new TestJob();
    const gate = deferred();
    job.gate = gate.promise;
    const first = job.runOnce();
    const second = job.runOnce();
    await turn();
    assert.equal(job.runs, 1, 'the second run waits');
    gate.resolve();
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.equal(job.maxInFlight, 1);
  });

  it('makes one run of the wakes of one turn, and one more run of a wake while a run is in flight', async () => {
    const job = new TestJob();
    job.wake();
    job.wake();
    job.wake();
    await turn();
    assert.equal(job.runs, 1);
    const gate = deferred();
    job.gate = gate.promise;
    const inFlight = job.runOnce();
    await turn();
    assert.equal(job.runs, 2);
    job.wake();
    job.wake();
    await turn();
    assert.equal(job.runs, 2, 'the woken run waits for the one in flight');
    gate.resolve();
    await inFlight;
    // A run queued now comes after the woken one: when it ends, the woken one has run, once.
    job.gate = undefined;
    await job.runOnce();
    assert.equal(job.runs, 4);
    assert.equal(job.maxInFlight, 1);
  });

  it('does not wake without a poll interval (a test or another loop runs it)', async () => {
    const job = new TestJob({ pollMs: 0 });
    job.wake();
    await turn();
    assert.equal(job.runs, 0);
    assert.equal(await job.runOnce(), 1);
  });

  it('stop waits for the run in flight, and no run starts after it', async () => {
    const job = new TestJob();
    const gate = deferred();
    job.gate = gate.promise;
    const inFlight = job.runOnce();
    await turn();
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await turn();
    assert.equal(stopped, false, 'stop waits');
    gate.resolve();
    await stopping;
    assert.equal(await inFlight, 1);
    assert.equal(await job.runOnce(), 0, 'a run after stop does nothing');
    job.wake();
    await turn();
    assert.equal(job.runs, 1);
  });

  it('polls every pollMs, waits max(pollMs, backoff) after a failed run, and polls again once a run works', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const job = new TestJob({ pollMs: 100 });
    job.failures = 3;
    job.start();
    // Each step: the time before which no run starts, then the run at it.
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const runs = job.runs;
      let waited = 0;
      while (job.runs === runs) {
        assert.ok(waited < 10_000, 'a run was scheduled');
        mock.timers.tick(50);
        waited += 50;
        await turn();
      }
      waits.push(waited);
    }
    // First run after pollMs; failures back off 100, 200, 400 ms (LoopBackoff from min(250, pollMs)); then pollMs again.
    assert.deepEqual(waits, [100, 100, 200, 400, 100]);
    await job.stop();
  });
});

interface Item extends Claimed {
  nextAttemptAt: number;
  status: string;
}

/** An in-memory queue: claims like the stores do (due, pending; attempt counted; leased). */
function memoryQueue(items: Item[], send: (item: Item) => Promise<AttemptResult>) {
  const outcomes: Array<{ id: string; outcome: DeliveryOutcome }> = [];
  const claims: number[] = [];
  return {
    outcomes,
    claims,
    queue: {
      async claimDue(now: string, leaseUntil: string, limit: number) {
        const due = items.filter((i) => i.status === 'pending' && i.nextAttemptAt <= Date.parse(now)).slice(0, limit);
        for (const item of due) {
          item.attempts++;
          item.nextAttemptAt = Date.parse(leaseUntil);
        }
        claims.push(due.length);
        return due.map((i) => ({ ...i }));
      },
      attempt: send,
      async recordOutcome(item: Item, outcome: DeliveryOutcome) {
        const stored = items.find((i) => i.id === item.id)!;
        stored.status = outcome.status;
        stored.nextAttemptAt = Date.parse(outcome.nextAttemptAt);
        outcomes.push({ id: item.id, outcome });
      },
      describe: (item: Item) => ({ item: item.id }),
      async pendingStats() {
        return { pending: items.filter((i) => i.status === 'pending').length, oldestCreatedAt: items.length ? new Date(0).toISOString() : null };
      },
    },
  };
}

/** A loop without a timer over `queue`: batches of 10, 5 attempts, retried a second apart unless `options` say otherwise. */
const testLoop = (queue: DeliveryQueue<Item>, options: Partial<DeliveryLoopOptions<Item>> = {}) =>
  new DeliveryLoop({
    name: 'test delivery',
    log: quiet,
    pollMs: 0,
    queue,
    batch: 10,
    leaseMs: 60_000,
    maxAttempts: 5,
    retryDelayMs: () => 1000,
    clock: () => new Date(),
    ...options,
  });

describe('DeliveryLoop', () => {
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  const item = (id: string): Item => ({ id, attempts: 0, nextAttemptAt: start, status: 'pending' });

  it('retries a failed attempt after retryDelayMs, and gives up after maxAttempts', async () => {
    let now = start;
    const items = [item('a')];
    const { queue, outcomes } = memoryQueue(items, async () => ({ ok: false, statusCode: 503, error: 'HTTP 503' }));
    const loop = testLoop(queue, { maxAttempts: 3, retryDelayMs: (n) => retryDelayMs(1000, n), clock: () => new Date(now) });
    assert.equal(await loop.runOnce(), 1);
    assert.equal(await loop.runOnce(), 0, 'not due before its retry');
    now += 999;
    assert.equal(await loop.runOnce(), 0);
    now += 1;
    assert.equal(await loop.runOnce(), 1, 'due retryBase after the first attempt');
    now += 1999;
    assert.equal(await loop.runOnce(), 0);
    now += 1;
    assert.equal(await loop.runOnce(), 1, 'twice that after the second');
    assert.deepEqual(
      outcomes.map((o) => [o.outcome.attempt.attempt, o.outcome.status, o.outcome.attempt.statusCode, o.outcome.attempt.error]),
      [
        [1, 'pending', 503, 'HTTP 503'],
        [2, 'pending', 503, 'HTTP 503'],
        [3, 'failed', 503, 'HTTP 503'],
      ],
    );
    assert.deepEqual(loop.outcomes, { delivered: 0, retry: 2, failed: 1 });
    now += 10 * 60_000;
    assert.equal(await loop.runOnce(), 0, 'given up');
  });

  it('gives up a final failure at once, records a throw as a failed attempt, and counts deliveries', async () => {
    const items = [item('gone'), item('throws'), item('ok')];
    const { queue, outcomes } = memoryQueue(items, async (i) => {
      if (i.id === 'gone') return { ok: false, error: 'the webhook was deleted', final: true };
      if (i.id === 'throws') throw new Error('boom');
      return { ok: true, statusCode: 204 };
    });
    const loop = testLoop(queue);
    assert.equal(await loop.runOnce(), 3);
    const byId = Object.fromEntries(outcomes.map((o) => [o.id, o.outcome]));
    assert.equal(byId.gone!.status, 'failed');
    assert.equal(byId.throws!.status, 'pending');
    assert.equal(byId.throws!.attempt.error, 'boom');
    assert.equal(byId.ok!.status, 'delivered');
    assert.equal(byId.ok!.attempt.error, null);
    assert.deepEqual(loop.outcomes, { delivered: 1, retry: 1, failed: 1 });
  });

  it('attempts a batch in parallel, claims batch after batch, and stops at maxPerRun', async () => {
    const items = ['a', 'b', 'c', 'd', 'e'].map(item);
    let inFlight = 0;
    let maxInFlight = 0;
    const { queue, claims } = memoryQueue(items, async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await turn();
      inFlight--;
      return { ok: true };
    });
    const capped = testLoop(queue, { batch: 1, maxPerRun: 2 });
    assert.equal(await capped.runOnce(), 2);
    assert.equal(maxInFlight, 1, 'one at a time with batch 1');
    assert.deepEqual(claims, [1, 1]);
    claims.length = 0;
    const drains = testLoop(queue, { batch: 2 });
    assert.equal(await drains.runOnce(), 3);
    assert.equal(maxInFlight, 2, "a batch's items at once");
    assert.deepEqual(claims, [2, 1, 0], 'claims until nothing is due');
  });

  it('adds up the figures of several queues for the metrics', async () => {
    const a = { outcomes: { delivered: 2, retry: 1, failed: 0 }, queueStats: async () => ({ pending: 1, oldestPendingSeconds: 30 }) };
    const b = { outcomes: { delivered: 1, retry: 0, failed: 4 }, queueStats: async () => ({ pending: 2, oldestPendingSeconds: 90 }) };
    const all = allDeliveries([a, b]);
    assert.deepEqual(all.outcomes, { delivered: 3, retry: 1, failed: 4 });
    assert.deepEqual(await all.queueStats(), { pending: 3, oldestPendingSeconds: 90 });
    a.outcomes.delivered++;
    assert.equal(all.outcomes.delivered, 4, 'read at each scrape');
  });
});
