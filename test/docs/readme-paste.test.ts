import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { freePort, ROOT, startServerProcess, waitForHealth } from '../support/process.ts';

// Issue 31 item 10: the README's shell blocks paste. From the quick start on, every block that talks to the
// server runs in one bash session, in order, against the built server that `npm start` runs, as a reader
// pastes them: the quick start's variables carry over, and a curl that gets a 4xx or 5xx fails the block.
// Left out, each for a reason a reader can see: blocks that install, start or build something (the server
// is already running), need Docker, a PostgreSQL superuser, an identity provider or a repository to scan.
// Addresses of the examples that would leave the machine (a CRM, Slack) are pointed at a receiver on
// loopback, the only rewrite besides the port.

interface Block {
  line: number;
  section: string;
  code: string;
}

/** The README's ```bash blocks from "## Quick start" on, with the section each is in. */
export function readmeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  let started = false;
  let current: Block | undefined;
  markdown.split('\n').forEach((text, index) => {
    if (current) {
      if (text.startsWith('```')) {
        blocks.push(current);
        current = undefined;
      } else current.code += `${text}\n`;
      return;
    }
    if (text.startsWith('## ')) {
      section = text.slice(3);
      if (section === 'Quick start') started = true;
    }
    if (started && text === '```bash') current = { line: index + 1, section, code: '' };
  });
  return blocks;
}

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

/** The quick start without the lines that install and start the server (it runs already). */
function quickStart(code: string): string {
  return code
    .split('\n')
    .filter((line) => !/^npm install$/.test(line.trim()) && !/npm start &$/.test(line.trim()))
    .join('\n');
}

describe("the README's shell blocks (issue 31 item 10)", () => {
  it('run as pasted after the quick start, against the built server', { timeout: 300_000 }, async (t) => {
    const received: string[] = [];
    const receiver = http.createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => receiver.close(resolve)));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-readme-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const port = freePort();
    const server = startServerProcess(t, {
      PORT: String(port),
      FLAGPOST_DATA_DIR: dataDir,
      FLAGPOST_ADMIN_TOKEN: 'change-me-to-a-long-secret',
      FLAGPOST_RATE_LIMIT_MAX: '0',
      // The examples' webhooks go to the receiver on loopback.
      FLAGPOST_WEBHOOK_TARGETS: 'any',
    });
    await waitForHealth(port, 60_000).catch((error) => assert.fail(`${error}\n${server.output()}`));

    const blocks = readmeBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    assert.ok(blocks.length > 5 && blocks[0]!.section === 'Quick start', 'the README has a quick start');
    const run = blocks.filter((block) => leftOut(block) === undefined);
    const rewrite = (code: string) =>
      code
        .replaceAll('localhost:3000', `localhost:${port}`)
        .replace(/https:\/\/(crm\.example|ci\.example\.com|hooks\.slack\.com)\/[^"' ]*/g, (url) => `${hook}/${new URL(url).hostname}`);
    const script = [
      'set -euo pipefail',
      // A 4xx or 5xx fails the block, with the body shown (`-f` in a block already fails, without it).
      'curl() { local a; for a in "$@"; do case $a in --fail|-[a-zA-Z]*f*) command curl "$@"; return; esac; done; command curl --fail-with-body "$@"; }',
      ...run.map((block, i) => {
        const code = rewrite(block.section === 'Quick start' ? quickStart(block.code) : block.code);
        return `echo "=== README.md:${block.line} (${block.section})" >&2\n${code}\necho >&2\n: block ${i} done`;
      }),
      'echo ALL-BLOCKS-RAN',
    ].join('\n');
    const outcome = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const bash = spawn('bash', ['-c', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: os.homedir() } });
      let out = '';
      bash.stdout.on('data', (d) => (out += d));
      bash.stderr.on('data', (d) => (out += d));
      bash.on('exit', (code) => resolve({ code, out }));
    });
    assert.equal(outcome.code, 0, `a README block failed:\n${outcome.out.slice(-4000)}`);
    assert.match(outcome.out, /ALL-BLOCKS-RAN/);
    assert.ok(run.length >= 8, `${run.length} blocks ran`);
    t.diagnostic(
      `${run.length} of ${blocks.length} blocks ran; left out: ${blocks
        .filter((b) => leftOut(b))
        .map((b) => `README.md:${b.line} (${leftOut(b)})`)
        .join('; ')}`,
    );
  });
});
