import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientKey } from './client-key.ts';
import { type BatchCounter, BatchedStore, MemoryStore, type RateLimitState } from './rate-limit-stores.ts';

describe('rate-limit keys and the memory store (contract D20)', () => {
  it('counts IPv4 as it is, mapped IPv4 as IPv4, and IPv6 per /64', () => {
    const cases: Array<[string, string]> = [
      ['203.0.113.7', '203.0.113.7'],
      ['::ffff:203.0.113.7', '203.0.113.7'],
      ['::FFFF:cb00:7107', '203.0.113.7'],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['2001:db8:1:2::99', '2001:db8:1:2::/64'],
      ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
      ['not an address', 'not an address'],
    ];
    for (const [ip, key] of cases) assert.equal(clientKey(ip), key, ip);
  });

  it('counts fixed windows and forgets the oldest client when full', () => {
    let now = 1_000;
    const store = new MemoryStore(2, () => now);
    const hit = (key: string) => {
      let state: RateLimitState | undefined;
      store.incr(key, (_err, s) => (state = s), 10_000, 5);
      return state!;
    };
    assert.deepEqual(hit('a'), { current: 1, ttl: 10_000 });
    now += 4_000;
    assert.deepEqual(hit('a'), { current: 2, ttl: 6_000 });
    now += 6_000;
    assert.deepEqual(hit('a'), { current: 1, ttl: 10_000 }, 'a new window');
    hit('b');
    hit('c'); // over capacity: a goes
    assert.equal(hit('a').current, 1);
    assert.equal(store.child({}), store);
  });
});

describe('the batched store of the workers (FLAGPOST_WORKERS > 1)', () => {
  const hits = (store: BatchedStore, keys: string[]) =>
    Promise.all(
      keys.map(
        (key) => new Promise<{ err: Error | null; state: RateLimitState }>((resolve) => store.incr(key, (err, state) => resolve({ err, state }), 60_000, 10)),
      ),
    );

  it('sends the requests of one turn of the event loop as one batch and hands each its own count', async () => {
    const primary = new MemoryStore(100);
    const batches: string[][] = [];
    const counter: BatchCounter = {
      async count(keys, windowMs) {
        batches.push(keys);
        const states: Array<[number, number]> = [];
        for (const key of keys) primary.incr(key, (_err, state) => states.push([state.current, state.ttl]), windowMs);
        return states;
      },
    };
    const store = new BatchedStore(counter);
    const first = await hits(store, ['a', 'b', 'a']);
    assert.deepEqual(batches, [['a', 'b', 'a']]);
    assert.deepEqual(
      first.map((r) => r.state.current),
      [1, 1, 2],
    );
    const second = await hits(store, ['a']);
    assert.equal(batches.length, 2);
    assert.equal(second[0]!.state.current, 3, 'the count lives in the primary, across batches');
  });

  it('hands every request of a batch the error when the primary does not answer (the limiter then lets them through)', async () => {
    const store = new BatchedStore({ count: () => Promise.reject(new Error('the primary did not count in time')) });
    const results = await hits(store, ['a', 'b']);
    for (const { err, state } of results) {
      assert.match(String(err?.message), /did not count/);
      assert.deepEqual(state, { current: 0, ttl: 0 });
    }
  });
});
