import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createTestDatabase, dialects } from '../support/context.ts';
import { ROOT } from '../support/process.ts';
import {
  type Block,
  bashBlocks,
  cloneView,
  problemsOf,
  readmeQuickStart,
  rewrite,
  runSession,
  type SessionBlock,
  startDocsServer,
  startReceiver,
  variablesRead,
  variablesSet,
} from './paste.ts';

// Issue 31 item 10: docs/api.md's shell blocks paste. After the README's quick start, every ```bash block of
// docs/api.md runs in one bash session, in order, against the built server that `npm start` runs, as a
// reader pastes them: the block at the top makes what the examples use (a project with flags, a segment, a
// member, a form with a submission) and sets their keys as variables, and later blocks keep the ids they
// need in variables too. Every curl's answer is recorded: a 5xx, or a 4xx that the block is not marked to
// expect, fails the block. A block that cannot run here is marked `<!-- paste: skip (why) -->` in the
// document (a reader of the rendered page does not see it), and a block that shows an error on purpose
// `<!-- paste: expect 404 (why) -->`; the examples' webhook and Prometheus addresses point at a receiver on
// loopback instead (the only rewrite besides the port), and the event stream (`curl -N`) is read for 2 s.
// The session runs in a folder that looks like a clone (paste.ts, cloneView): the files the blocks write
// (cookies.txt, flags.json, exports) land there.

const DOC = 'docs/api.md';
/**
 * At most this many blocks may be skipped: each is a place the document is not checked. None is now: the
 * blocks that need what is not here (an identity provider) run and expect the answer without it.
 */
const MAX_SKIPS = 0;
/** Variables a block may read without an earlier block setting them. */
const GIVEN = new Set(['HOME', 'PATH']);

const label = (block: Block) => `${DOC}:${block.line} (${block.section})`;

function documentBlocks(): Block[] {
  return bashBlocks(fs.readFileSync(path.join(ROOT, DOC), 'utf8'), DOC);
}

describe('the paste helpers (test/docs/paste.ts)', () => {
  it('read blocks with their section and mark, fences in lists included', () => {
    const md = [
      '## A',
      '### GET /x',
      '<!-- paste: skip (needs an SMTP server) -->',
      '```bash',
      'curl -s $BASE/x',
      '```',
      '- a list item:',
      '',
      '  <!-- paste: expect 404 409 (shown on purpose) -->',
      '  ```bash',
      '  curl -i $BASE/y \\',
      '    -H "$AUTH"',
      '  ```',
      '```json',
      '{}',
      '```',
    ].join('\n');
    assert.deepEqual(bashBlocks(md, 'x.md'), [
      { line: 4, section: 'GET /x', code: 'curl -s $BASE/x\n', mark: { kind: 'skip', reason: 'needs an SMTP server' } },
      { line: 10, section: 'GET /x', code: 'curl -i $BASE/y \\\n  -H "$AUTH"\n', mark: { kind: 'expect', statuses: [404, 409], reason: 'shown on purpose' } },
    ]);
    assert.throws(() => bashBlocks('<!-- paste: skp -->\n```bash\n```\n', 'x.md'), /unknown paste mark "skp"/);
    assert.throws(() => bashBlocks('<!-- paste: expect 500 -->\n```bash\n```\n', 'x.md'), /unknown paste mark/);
  });

  it('find the variables a block reads and sets, not those in single quotes or comments', () => {
    const code = `CR=$(curl -s "$BASE/x/\${ID}" -d '{"a":"$NOT"}' | json .id)   # $COMMENT\ncurl -d '{"e":"'$PROD_KEY'"}' "$BASE"; X=1\n`;
    assert.deepEqual(variablesRead(code).sort(), ['BASE', 'ID', 'PROD_KEY']);
    assert.deepEqual(variablesSet(code), ['CR', 'X']);
  });

  it('point the addresses the server would contact at the receiver, and refuse any other', () => {
    const code = `curl localhost:3000/x -d '{"url":"https://ci.example.com/flagpost","p":{"url":"http://10.0.0.5:9090"}}'`;
    assert.equal(
      rewrite(code, 4000, 'http://127.0.0.1:9'),
      `curl localhost:4000/x -d '{"url":"http://127.0.0.1:9/ci.example.com/flagpost","p":{"url":"http://127.0.0.1:9/10.0.0.5:9090"}}'`,
    );
    assert.throws(() => rewrite(`-d '{"webhookUrl":"https://elsewhere.example/x"}'`, 4000, 'http://127.0.0.1:9'), /is not on loopback/);
  });
});

describe("docs/api.md's shell blocks (issue 31 item 10)", () => {
  it('read only variables that the quick start or an earlier block sets, and are seldom skipped', () => {
    const quickStart = readmeQuickStart(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    const blocks = documentBlocks();
    assert.ok(blocks.length > 100, `${blocks.length} blocks`);
    const set = new Set([...GIVEN, ...variablesSet(quickStart.code)]);
    const unset: string[] = [];
    for (const block of blocks) {
      if (block.mark?.kind === 'skip') continue;
      // A block may read what it sets itself (in order, as bash does; close enough for the examples).
      const own = variablesSet(block.code);
      for (const name of variablesRead(block.code)) if (!set.has(name) && !own.includes(name)) unset.push(`${label(block)}: $${name}`);
      for (const name of own) set.add(name);
    }
    assert.deepEqual(unset, [], 'variables no earlier block sets');
    const skipped = blocks.filter((b) => b.mark?.kind === 'skip');
    assert.ok(skipped.length <= MAX_SKIPS, `${skipped.length} blocks skipped, at most ${MAX_SKIPS}: ${skipped.map(label).join('; ')}`);
  });

  for (const dialect of dialects()) {
    it(`run as pasted after the README's quick start, against the built server (${dialect})`, { timeout: 300_000 }, async (t) => {
      const started = Date.now();
      const receiver = await startReceiver(t);
      const database = await createTestDatabase(dialect);
      t.after(() => database.drop());
      const { port, server } = await startDocsServer(t, database.env);
      const cwd = cloneView(t);

      const quickStart = readmeQuickStart(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
      const blocks = documentBlocks();
      const run = blocks.filter((b) => b.mark?.kind !== 'skip');
      const session: SessionBlock[] = [
        { label: `README.md:${quickStart.line} (Quick start)`, code: rewrite(quickStart.code, port, receiver.url) },
        ...run.map((block) => ({
          label: label(block),
          code: rewrite(block.code, port, receiver.url),
          expect: block.mark?.kind === 'expect' ? block.mark.statuses : [],
        })),
      ];
      const { outcomes, output } = await runSession(session, { cwd, timeoutMs: 240_000 });

      const problems = problemsOf(session, outcomes, output);
      assert.deepEqual(problems, [], `blocks that failed:\n${problems.join('\n')}\n--- server log (tail):\n${server.output().slice(-3000)}`);
      const requests = outcomes.reduce((n, o) => n + o.statuses.length, 0);
      const skipped = blocks.filter((b) => b.mark?.kind === 'skip');
      t.diagnostic(
        `${dialect}: ${run.length} of ${blocks.length} blocks ran (${requests} requests; ${run.filter((b) => b.mark?.kind === 'expect').length} expect an error) ` +
          `in ${Math.round((Date.now() - started) / 1000)} s; skipped: ${skipped.map((b) => `${label(b)} (${(b.mark as { reason: string }).reason})`).join('; ') || 'none'}; ` +
          `the receiver got ${receiver.received.length} requests`,
      );
    });
  }
});
