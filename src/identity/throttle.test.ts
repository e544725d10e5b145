import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AuditBudgetState, auditBudget, type PasswordWorkAdmission, passwordWorkAdmission, retryAfterOf } from './throttle.ts';

const END = '2026-05-01T08:15:00.000Z';
const at = (iso: string) => Date.parse(iso);

describe('whether a counted attempt may go ahead', () => {
  const cases: Array<[string, number, number, string, number]> = [
    ['lets the first attempt go', 1, 5, '2026-05-01T08:00:00.000Z', 0],
    ['lets the attempt that reaches the limit go', 5, 5, '2026-05-01T08:00:00.000Z', 0],
    ['refuses the one after the limit until the window ends', 6, 5, '2026-05-01T08:00:00.000Z', 900],
    ['rounds the wait up to whole seconds', 6, 5, '2026-05-01T08:14:59.001Z', 1],
    ['never says 0 while it refuses, even at the very end', 60, 5, END, 1],
  ];
  for (const [title, hits, limit, now, wait] of cases) {
    it(title, () => assert.equal(retryAfterOf({ hits, windowEndsAt: END }, limit, at(now)), wait));
  }
});

describe('admission of password work', () => {
  const limits = { concurrency: 2, queue: 3, perClient: 2 };
  const cases: Array<[string, { running: number; waiting: number; ofClient: number }, PasswordWorkAdmission]> = [
    ['runs at once while a slot is free', { running: 0, waiting: 0, ofClient: 0 }, 'run'],
    ['runs in the last free slot', { running: 1, waiting: 0, ofClient: 1 }, 'run'],
    ['waits when every slot is busy and the queue has room', { running: 2, waiting: 2, ofClient: 0 }, 'wait'],
    ['refuses the server when the queue is full (503)', { running: 2, waiting: 3, ofClient: 0 }, 'server-busy'],
    ['refuses a client at its share, even with free slots (429)', { running: 0, waiting: 0, ofClient: 2 }, 'client-busy'],
    ['names the client before the server when both are full', { running: 2, waiting: 3, ofClient: 2 }, 'client-busy'],
  ];
  for (const [title, load, expected] of cases) it(title, () => assert.equal(passwordWorkAdmission(load, limits), expected));
});

describe('the audit budget of failed sign-ins', () => {
  it('writes up to the budget per minute, then counts, and reports the count with the next entry', () => {
    let state: AuditBudgetState = { since: 0, written: 0, skipped: 0 };
    const outcomes: Array<[boolean, number]> = [];
    const take = (now: number) => {
      const result = auditBudget(state, 2, now);
      state = result.next;
      outcomes.push([result.write, result.skipped]);
    };
    for (const now of [60_000, 60_001, 60_002, 60_003, 120_000, 120_001, 120_002]) take(now);
    assert.deepEqual(outcomes, [
      [true, 0],
      [true, 0],
      [false, 1],
      [false, 2],
      [true, 2],
      [true, 0],
      [false, 1],
    ]);
  });
});
