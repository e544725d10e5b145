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
});
