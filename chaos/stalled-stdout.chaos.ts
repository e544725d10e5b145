import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort, startServerProcess as start, waitForHealth } from '../test/support/process.ts';

// Issue 8: with stdout a pipe nobody reads (a stuck log collector), the server keeps answering and
// SIGTERM still ends it within its grace period.
describe('a stalled stdout', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('keeps answering and stops within its grace period while stdout is a pipe nobody reads', async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-proc-'));
    dirs.push(dataDir);
    const port = freePort();
    // The built server, as `npm start` runs it: until issue 19 it hung forever here, in a futex wait at exit.
    const server = start(
      t,
      { PORT: String(port), FLAGPOST_DATA_DIR: dataDir, FLAGPOST_ADMIN_TOKEN: 'stalled-admin-token-0123456789', LOG_LEVEL: 'info' },
      { readStdout: false },
    );
    await waitForHealth(port);
    // One log line per request, about 200 bytes: far more than a pipe holds (64 KiB).
    let answered = 0;
    for (let round = 0; round < 40; round++) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, () =>
          fetch(`http://127.0.0.1:${port}/healthz?padding=${'x'.repeat(200)}`, { signal: AbortSignal.timeout(3000) }).then(
            (r) => r.status,
            () => 0,
          ),
        ),
      );
      answered += batch.filter((s) => s === 200).length;
    }
    assert.equal(answered, 2000, 'every request is answered although the log sink is stuck');
    const stopping = Date.now();
    server.child.kill('SIGTERM');
    const code = await Promise.race([server.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 12_000))]);
    t.diagnostic(`exited with ${code} after ${Date.now() - stopping} ms`);
    assert.equal(code, 0, 'exits within the 10 s grace period');
  });
});
