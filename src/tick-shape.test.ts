import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keepTickShape, keptTickRecord } from './tick-shape.ts';

test('keepTickShape holds on to a nextTick record of this Node.js (its callback and its async-id symbols)', async () => {
  keepTickShape();
  await new Promise((resolve) => setImmediate(resolve));
  const record = keptTickRecord() as { callback?: unknown } | undefined;
  assert.ok(record, 'the record of the nextTick callback was not handed over by executionAsyncResource()');
  assert.equal(typeof record.callback, 'function');
  // Node 24 adds a third symbol (the async context frame) to the same literal.
  const symbols = Object.getOwnPropertySymbols(record).map((symbol) => symbol.description);
  assert.ok(symbols.includes('async_id_symbol') && symbols.includes('trigger_async_id_symbol'), String(symbols));
  // Once only: a second call keeps the first record.
  keepTickShape();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(keptTickRecord(), record);
});
