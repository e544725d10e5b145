import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newId } from './codec.ts';

it('makes ids of 26 Crockford base-32 characters that sort in the order they were made, each new', () => {
  const ids = Array.from({ length: 20_000 }, () => newId());
  for (const id of ids) assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.deepEqual([...ids].sort(), ids);
  assert.equal(new Set(ids).size, ids.length);
});

it('draws the random part evenly over the 32 symbols', () => {
  // The first id of a millisecond draws a new random part (later ones in it increment the last).
  const counts = new Map<string, number>();
  let draws = 0;
  for (let i = 0; i < 1_000; i++) {
    const ms = Date.now();
    while (Date.now() === ms);
    for (const symbol of newId().slice(10)) {
      counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
      draws++;
    }
  }
  // 16,000 symbols, 500 expected each; the bound is about 7 standard deviations (22) from it.
  assert.equal(counts.size, 32);
  for (const [symbol, n] of counts) assert.ok(Math.abs(n - draws / 32) < 150, `${symbol}: ${n}`);
});
