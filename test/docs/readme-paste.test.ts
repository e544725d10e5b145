import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../support/process.ts';
import { type Block, bashBlocks, problemsOf, readmeQuickStart, rewrite, runSession, startDocsServer, startReceiver } from './paste.ts';

// Issue 31 item 10: the README's shell blocks paste. From the quick start on, every block that talks to the
// server runs in one bash session, in order, against the built server that `npm start` runs, as a reader
// pastes them: the quick start's variables carry over, and a curl that gets a 4xx or 5xx fails the block.
// Left out, each for a reason a reader can see: blocks that install, start or build something (the server
// is already running), need Docker, a PostgreSQL superuser, an identity provider or a repository to scan.
// Addresses of the examples that would leave the machine (a CRM, Slack) are pointed at a receiver on
// loopback, the only rewrite besides the port. docs/api.md's blocks: api-doc-paste.test.ts; what the two
// share (the session, its curl, the rewrites): paste.ts.

/** Why a block is not run here, or undefined when it is. */
export function leftOut(block: Block): string | undefined {
  const reasons: Array<[RegExp, string]> = [
    [/\bdocker\b/, 'needs Docker (npm run test:image runs the image)'],
    [/\bpsql\b/, "needs PostgreSQL's superuser"],
    [/npm (run )?(start|test|run build|install)|npm run flagpost|node cli\/dist/, 'starts, builds or tests (the server already runs)'],
    [/^FLAGPOST_OIDC_/m, 'settings of an identity provider'],
  ];
  if (block.section === 'Quick start') return undefined;
  for (const [pattern, reason] of reasons) if (pattern.test(block.code)) return reason;
  if (!/\bcurl\b/.test(block.code)) return 'talks to no server';
  return undefined;
}

describe("the README's shell blocks (issue 31 item 10)", () => {
  it('run as pasted after the quick start, against the built server', { timeout: 300_000 }, async (t) => {
    const receiver = await startReceiver(t);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-readme-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const { port, server } = await startDocsServer(t, { FLAGPOST_DATA_DIR: dataDir });

    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const all = bashBlocks(readme, 'README.md');
    const blocks = all.slice(all.findIndex((b) => b.section === 'Quick start'));
    assert.ok(blocks.length > 5 && blocks[0]!.section === 'Quick start', 'the README has a quick start');
    const quickStart = readmeQuickStart(readme);
    const run = blocks.filter((block) => leftOut(block) === undefined);
    const session = run.map((block) => ({
      label: `README.md:${block.line} (${block.section})`,
      code: rewrite(block.line === quickStart.line ? quickStart.code : block.code, port, receiver.url),
    }));
    const { outcomes, output } = await runSession(session, { cwd: ROOT, timeoutMs: 240_000 });
    const problems = problemsOf(session, outcomes, output);
    assert.deepEqual(problems, [], `README blocks that failed:\n${problems.join('\n')}\n--- server log (tail):\n${server.output().slice(-3000)}`);
    assert.ok(run.length >= 8, `${run.length} blocks ran`);
    t.diagnostic(
      `${run.length} of ${blocks.length} blocks ran; left out: ${blocks
        .filter((b) => leftOut(b))
        .map((b) => `README.md:${b.line} (${leftOut(b)})`)
        .join('; ')}`,
    );
  });
});
