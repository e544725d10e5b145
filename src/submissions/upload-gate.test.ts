import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UploadGate } from './upload-gate.ts';

describe('UploadGate', () => {
  it('lets `limit` uploads through and queues the rest in order', async () => {
    const gate = new UploadGate(2);
    const order: number[] = [];
    const a = await gate.acquire();
    const b = await gate.acquire();
    const c = gate.acquire().then((release) => {
      order.push(3);
      return release;
    });
    const d = gate.acquire().then((release) => {
      order.push(4);
      return release;
    });
    assert.deepEqual(gate.load, { active: 2, waiting: 2 });
    a();
    const releaseC = await c;
    assert.deepEqual(order, [3]);
    b();
    b(); // a second call changes nothing
    const releaseD = await d;
    assert.deepEqual(order, [3, 4]);
    releaseC();
    releaseD();
    assert.deepEqual(gate.load, { active: 0, waiting: 0 });
  });

  it('drops a waiter whose client went away, so its slot goes to the next one', async () => {
    const gate = new UploadGate(1);
    const first = await gate.acquire();
    const gone = new AbortController();
    const abandoned = gate.acquire(gone.signal);
    const next = gate.acquire();
    assert.deepEqual(gate.load, { active: 1, waiting: 2 });
    gone.abort();
    await assert.rejects(abandoned);
    assert.deepEqual(gate.load, { active: 1, waiting: 1 });
    first();
    const release = await next;
    release();
    assert.deepEqual(gate.load, { active: 0, waiting: 0 });
  });

  it('refuses at once a client that is already gone', async () => {
    const gate = new UploadGate(1);
    await assert.rejects(gate.acquire(AbortSignal.abort()));
    assert.deepEqual(gate.load, { active: 0, waiting: 0 });
  });
});
