import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { usersOverTime } from './results.ts';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;

describe('usersOverTime: users counted by the end of each day', () => {
  it('has no point before the first exposure', () => assert.deepEqual(usersOverTime([], ['off', 'on']), []));

  it('adds each day to the days before, repeats days without a new user, and lists every variant', () => {
    const rows = [
      { day: day('2026-11-25'), variant: 'off', users: 10 },
      { day: day('2026-11-25'), variant: 'on', users: 12 },
      { day: day('2026-11-27'), variant: 'on', users: 3 },
    ];
    assert.deepEqual(usersOverTime(rows, ['off', 'on']), [
      { date: '2026-11-25', users: { off: 10, on: 12 } },
      { date: '2026-11-26', users: { off: 10, on: 12 } },
      { date: '2026-11-27', users: { off: 10, on: 15 } },
    ]);
  });

  it('starts a variant nobody saw yet at zero', () => {
    assert.deepEqual(usersOverTime([{ day: day('2026-11-27'), variant: 'on', users: 1 }], ['off', 'on']), [{ date: '2026-11-27', users: { off: 0, on: 1 } }]);
  });
});
