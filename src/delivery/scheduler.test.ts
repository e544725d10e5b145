import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { Scheduler, type TimedTask } from './scheduler.ts';

// The scheduler alone: which jobs run in this process, and the timer it keeps for timed tasks
// (node:test's mock timers stand in for setTimeout; named locks are a stand-in of NamedLocks' contract).

const quiet = { warn() {}, info() {} };
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const freeLocks = { runExclusive: async <T>(_name: string, work: () => Promise<T>) => ({ ran: true as const, value: await work() }) };
const heldLocks = { runExclusive: async () => ({ ran: false as const }) };

/** Advances the mock clock in steps of `step` until `done()`, answering the time it took. */
async function waitFor(done: () => boolean, step = 50): Promise<number> {
  let waited = 0;
  while (!done()) {
    assert.ok(waited < 100_000, 'a run was scheduled');
    mock.timers.tick(step);
    waited += step;
    await turn();
  }
  return waited;
}

describe('Scheduler', () => {
  afterEach(() => mock.timers.reset());

  it('runs jobs placed in one process only in the process that runs jobs', () => {
    const noop = { start() {}, stop: async () => {} };
    const task: TimedTask = { run: async () => {}, everyMs: 0 };
    for (const runsJobs of [true, false]) {
      const scheduler = new Scheduler({ runsJobs, log: quiet, locks: freeLocks });
      scheduler.add('every', noop, 'every process');
      scheduler.add('one', noop, 'one process');
      scheduler.every('once across instances', task, 'one process of all instances');
      const names = scheduler.here.map((j) => j.name);
      assert.deepEqual(names, runsJobs ? ['every', 'one', 'once across instances'] : ['every']);
    }
  });

  it("keeps a timed task's timer: the first run, then nextRunMs after a run that worked, the backoff (at most the interval) after a failure", async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    let runs = 0;
    let failures = 2;
    const scheduler = new Scheduler({ runsJobs: true, log: quiet, locks: freeLocks });
    scheduler.every(
      'timed',
      {
        run: async () => {
          runs++;
          if (failures-- > 0) throw new Error('database away');
        },
        everyMs: 1500,
        firstRunMs: 100,
        nextRunMs: () => 300,
      },
      'every process',
    );
    scheduler.start();
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = runs;
      waits.push(await waitFor(() => runs > before));
    }
    // First run at 100 ms; two failures back off 1 s and 1.5 s (2 s capped at the interval); then 300 ms.
    assert.deepEqual(waits, [100, 1000, 1500, 300]);
    await scheduler.stop();
  });

  it("stops a task's run at its next step, waits for it, then runs its last step, started or not", async () => {
    const seen: string[] = [];
    let release!: () => void;
    const scheduler = new Scheduler({ runsJobs: true, log: quiet, locks: freeLocks });
    const job = scheduler.every(
      'long',
      {
        run: async (signal) => {
          seen.push('run');
          await new Promise<void>((resolve) => (release = resolve));
          seen.push(signal.aborted ? 'run saw stop' : 'run not stopped');
        },
        everyMs: 0,
        finally: async () => {
          seen.push('finally');
        },
      },
      'every process',
    );
    const running = job.runNow();
    await turn();
    const stopping = scheduler.stop();
    await turn();
    release();
    await stopping;
    assert.equal(await running, true);
    assert.deepEqual(seen, ['run', 'run saw stop', 'finally']);
    assert.equal(await job.runNow(), false, 'no run after stop');
  });

  it('skips the run of a job placed in one process of all instances while another instance holds its lock', async () => {
    let runs = 0;
    const task: TimedTask = { run: async () => runs++, everyMs: 0 };
    const held = new Scheduler({ runsJobs: true, log: quiet, locks: heldLocks }).every('once', task, 'one process of all instances');
    assert.equal(await held.runNow(), false);
    assert.equal(runs, 0);
    // A job in every process takes no lock.
    assert.equal(await new Scheduler({ runsJobs: true, log: quiet, locks: heldLocks }).every('each', task, 'every process').runNow(), true);
    assert.equal(runs, 1);
  });
});
