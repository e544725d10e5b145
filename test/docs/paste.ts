import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, type ProcessOwner, ROOT, type ServerProcess, startServerProcess, waitForHealth } from '../support/process.ts';

// What the paste tests of the docs share (issue 31 item 10: README.md in readme-paste.test.ts, docs/api.md in
// api-doc-paste.test.ts): the ```bash blocks of a Markdown file with the marks a block may carry, a receiver on
// loopback for the webhooks the examples set up, the built server, and one bash session that runs the blocks
// in order as a reader pastes them, with a `curl` that records the status of every answer.

/** A mark in an HTML comment on the line before a block (a reader of the rendered page does not see it). */
export type Mark = { kind: 'skip'; reason: string } | { kind: 'expect'; statuses: number[]; reason: string };

export interface Block {
  /** The 1-based line of the block's opening fence. */
  line: number;
  /** The `##` section the block is in (its `###` heading when it has one). */
  section: string;
  code: string;
  mark?: Mark;
}

const MARK = /^\s*<!--\s*paste:\s*(.*?)\s*-->\s*$/;

/**
 * Reads `<!-- paste: skip (reason) -->` or `<!-- paste: expect 404 (reason) -->` (the block's answers may be
 * these 4xx statuses, and each must occur); anything else is an error.
 */
export function parseMark(text: string, where: string): Mark {
  const skip = /^skip \((.+)\)$/.exec(text);
  if (skip) return { kind: 'skip', reason: skip[1]! };
  const expect = /^expect((?: 4\d\d)+)(?: \((.+)\))?$/.exec(text);
  if (expect) return { kind: 'expect', statuses: expect[1]!.trim().split(' ').map(Number), reason: expect[2] ?? '' };
  throw new Error(`${where}: unknown paste mark "${text}" (skip (<reason>) or expect <4xx status> ... (<reason>))`);
}

/**
 * The ```bash blocks of a Markdown file, fences indented in lists included (their indentation removed),
 * each with its section and the paste mark of the line before it.
 */
export function bashBlocks(markdown: string, file: string): Block[] {
  const blocks: Block[] = [];
  let section = '';
  let current: (Block & { indent: number }) | undefined;
  const lines = markdown.split('\n');
  lines.forEach((text, index) => {
    if (current) {
      if (text.trim().startsWith('```')) {
        const { indent: _, ...block } = current;
        blocks.push(block);
        current = undefined;
      } else current.code += `${text.slice(Math.min(current.indent, text.length - text.trimStart().length))}\n`;
      return;
    }
    const heading = /^(##+) (.*)$/.exec(text);
    if (heading && heading[1]!.length <= 3) section = heading[2]!;
    if (text.trim() === '```bash') {
      const previous = lines[index - 1] ?? '';
      const mark = MARK.exec(previous);
      current = {
        line: index + 1,
        section,
        code: '',
        indent: text.length - text.trimStart().length,
        ...(mark ? { mark: parseMark(mark[1]!, `${file}:${index}`) } : {}),
      };
    }
  });
  return blocks;
}

/** The shell variables a block reads (`$NAME`, `${NAME}`), outside single quotes and comments. */
export function variablesRead(code: string): string[] {
  const names = new Set<string>();
  let single = false;
  let double = false;
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (single) {
      if (c === "'") single = false;
      continue;
    }
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === "'" && !double) single = true;
    else if (c === '"') double = !double;
    else if (c === '#' && !double && (i === 0 || /\s/.test(code[i - 1]!))) {
      while (i < code.length && code[i] !== '\n') i++;
    } else if (c === '$') {
      const name = /^\{?([A-Za-z_][A-Za-z0-9_]*)/.exec(code.slice(i + 1));
      if (name) names.add(name[1]!);
    }
  }
  return [...names];
}

/** The shell variables a block sets (`NAME=...` at the start of a command). */
export function variablesSet(code: string): string[] {
  return [...code.matchAll(/(?:^|[;&|]\s*|\bexport\s+)([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]!);
}

/** An HTTP server on loopback that answers 200 to anything and keeps what it got. */
export async function startReceiver(owner: ProcessOwner): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  const receiver = http.createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  owner.after(() => new Promise((resolve) => receiver.close(resolve)));
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, received };
}

/**
 * The built server (`npm start`'s dist/main.js) on a free port with the admin token of the docs, no rate
 * limit (the examples are many requests from one address) and webhooks allowed to loopback, where the
 * examples' webhooks are pointed.
 */
export async function startDocsServer(owner: ProcessOwner, env: Record<string, string>): Promise<{ port: number; server: ServerProcess }> {
  const port = freePort();
  const server = startServerProcess(owner, {
    PORT: String(port),
    FLAGPOST_ADMIN_TOKEN: 'change-me-to-a-long-secret',
    FLAGPOST_RATE_LIMIT_MAX: '0',
    FLAGPOST_WEBHOOK_TARGETS: 'any',
    ...env,
  });
  await waitForHealth(port, 60_000).catch((error) => {
    throw new Error(`${error}\n${server.output()}`);
  });
  return { port, server };
}

/** What became of one block in the session. */
export interface BlockOutcome {
  /** Every answer's HTTP status, in order (000: no answer). */
  statuses: number[];
  /** Commands that failed (the ERR trap), and answers no block expects. */
  failures: string[];
  /** Whether the session got to the block's end. */
  finished: boolean;
}

/**
 * The `curl` of the session. It records each answer's status in the log and fails the command for an answer
 * of 400 or more that the block does not expect ($PASTE_EXPECT), showing the body as it is (curl prints it).
 * A stream (`-N`) is read for 2 seconds: ending it then is a success when it answered 200.
 */
const CURL = String.raw`curl() {
  local err rc status stream= a
  for a in "$@"; do case $a in -N|--no-buffer) stream=1;; esac; done
  err=$(mktemp)
  if [[ -n $stream ]]; then set -- --max-time 2 "$@"; fi
  command curl --no-progress-meter "$@" -w '%{stderr}PASTE-STATUS %{http_code}\n' 2>"$err"; rc=$?
  status=$(sed -n 's/^PASTE-STATUS //p' "$err" | tail -n 1)
  grep -v '^PASTE-STATUS ' "$err" >&2; rm -f "$err"
  [[ -n $status ]] || status=000
  echo "$PASTE_BLOCK status $status" >> "$PASTE_LOG"
  if [[ -n $stream && $rc == 28 && $status == 200 ]]; then rc=0; fi
  if (( 10#$status >= 400 )); then
    case " $PASTE_EXPECT " in *" $status "*) (( 10#$status < 500 )) && return 0;; esac
    echo "$PASTE_BLOCK fail HTTP $status from curl $*" >> "$PASTE_LOG"
    return 22
  fi
  return $rc
}
paste_err() { local c=$BASH_COMMAND; echo "$PASTE_BLOCK fail exit $1: $(printf %s "$c" | tr '\n' ' ')" >> "$PASTE_LOG"; }
trap 'paste_err $?' ERR`;

/**
 * Runs the blocks in order in one bash session in `cwd`, as pasted (no `set -e`: a failed command is
 * recorded and the next one runs, so one run names every block that fails). Returns each block's outcome
 * and the session's output.
 */
export async function runSession(
  blocks: SessionBlock[],
  options: { cwd: string; timeoutMs: number; env?: Record<string, string> },
): Promise<{ outcomes: BlockOutcome[]; output: string; code: number | null }> {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-paste-log-')), 'log');
  fs.writeFileSync(log, '');
  const script = [
    'exec 2>&1',
    'set -o pipefail',
    `PASTE_LOG=${JSON.stringify(log)}`,
    'PASTE_BLOCK=-1',
    'PASTE_EXPECT=',
    CURL,
    ...blocks.map((block, i) =>
      [
        `PASTE_BLOCK=${i}; PASTE_EXPECT='${(block.expect ?? []).join(' ')}'`,
        // On a line of its own: the previous block's output need not end with a line break.
        `printf '\\n%s\\n' ${JSON.stringify(`=== ${block.label}`)}`,
        block.code,
        // A block that leaves a quote or a line continuation open swallows this line: the block never ends.
        `echo "${i} done" >> "$PASTE_LOG"`,
      ].join('\n'),
    ),
  ].join('\n');
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const bash = spawn('bash', ['-c', script], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), LANG: 'C.UTF-8', ...options.env },
    });
    let out = '';
    bash.stdout.on('data', (d) => (out += d));
    bash.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => bash.kill('SIGKILL'), options.timeoutMs);
    bash.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ code: exitCode, output: out });
    });
  });
  const outcomes: BlockOutcome[] = blocks.map(() => ({ statuses: [], failures: [], finished: false }));
  for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
    const entry = /^(-?\d+) (status|fail|done) ?(.*)$/.exec(line);
    if (!entry) continue;
    const outcome = outcomes[Number(entry[1])];
    if (!outcome) continue;
    if (entry[2] === 'status') outcome.statuses.push(Number(entry[3]));
    else if (entry[2] === 'fail') outcome.failures.push(entry[3]!);
    else outcome.finished = true;
  }
  fs.rmSync(path.dirname(log), { recursive: true, force: true });
  return { outcomes, output, code };
}

/** The part of the session's output that belongs to a block (from its `=== label` line to the next). */
export function outputOf(output: string, label: string): string {
  const start = output.indexOf(`\n=== ${label}\n`);
  if (start < 0) return '';
  const next = output.indexOf('\n=== ', start + 1);
  return output.slice(start, next < 0 ? undefined : next + 1);
}

/** The README's quick start without the lines that install and start the server (it runs already). */
export function readmeQuickStart(readme: string): Block {
  const block = bashBlocks(readme, 'README.md').find((b) => b.section === 'Quick start');
  if (!block) throw new Error('the README has no bash block in "## Quick start"');
  const code = block.code
    .split('\n')
    .filter((line) => !/^npm install$/.test(line.trim()) && !/npm start &$/.test(line.trim()))
    .join('\n');
  return { ...block, code };
}

/** Hosts of the examples that the server would contact (webhooks, chat, a Prometheus); none is loopback. */
const OUTSIDE = ['crm.example', 'ci.example.com', 'hooks.slack.com', 'hooks.example', '10.0.0.5:9090'];

/**
 * Points the examples' webhook and Prometheus addresses at the receiver on loopback (`https://ci.example.com/x`
 * becomes `<receiver>/ci.example.com/x`), and the server's port at `port`: the only rewrites of a block. Throws
 * when a URL the server would contact is left pointing elsewhere, so that no example can make a test leave
 * the machine (a new host in the docs must be added to OUTSIDE).
 */
export function rewrite(code: string, port: number, receiver: string): string {
  const hosts = OUTSIDE.map((h) => h.replaceAll('.', '\\.')).join('|');
  const out = code
    .replaceAll('localhost:3000', `localhost:${port}`)
    .replace(new RegExp(`https?://(${hosts})(?=[/"' ]|$)`, 'gm'), (_, host: string) => `${receiver}/${host}`);
  for (const m of out.matchAll(/"(url|webhookUrl|slackWebhookUrl|discordWebhookUrl)"\s*:\s*"([^"]*)"/g)) {
    if (!m[2]!.startsWith(receiver)) throw new Error(`${m[1]} ${m[2]} is not on loopback: add its host to OUTSIDE in test/docs/paste.ts`);
  }
  return out;
}

/**
 * A folder that looks like a clone of the repository (a symbolic link to each of its tracked top-level entries),
 * where the blocks run: files they name (`@package.json`) are there, and files they write (`-o file.csv`,
 * `cookies.txt`) land in the folder, not in the repository. Removed when the test ends.
 */
export function cloneView(owner: ProcessOwner): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-paste-'));
  // Only what git tracks: a file a block writes can never be one of the repository's (or a leftover of its).
  const tracked = new Set(
    execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((f) => f.split('/')[0]!),
  );
  for (const entry of tracked) fs.symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  owner.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One block of a session: its label, the code run, and the 4xx statuses its mark expects. */
export interface SessionBlock {
  label: string;
  code: string;
  expect?: number[];
}

/**
 * What went wrong in a session, one text per block that failed (with its part of the output): a block
 * that did not finish, a failed command, an answer of 400 or more it does not expect, an expected status
 * that never came, an answer that never came or was a 5xx.
 */
export function problemsOf(session: SessionBlock[], outcomes: BlockOutcome[], output: string): string[] {
  return session.flatMap((block, i) => {
    const outcome = outcomes[i]!;
    const found: string[] = [];
    if (!outcome.finished) found.push('did not finish');
    found.push(...outcome.failures);
    for (const status of block.expect ?? []) {
      if (!outcome.statuses.includes(status)) found.push(`marked to expect ${status}, got ${outcome.statuses.join(', ') || 'no answer'}`);
    }
    const bad = outcome.statuses.filter((s) => s === 0 || s >= 500);
    if (bad.length > 0 && outcome.failures.length === 0) found.push(`answers ${bad.join(', ')}`);
    if (found.length === 0) return [];
    return [`${block.label}:\n  ${found.join('\n  ')}\n${outputOf(output, block.label).slice(-1500)}`];
  });
}
