import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Whatever owns a child process: a test's context (`t`), or anything else with an `after` hook. */
export interface ProcessOwner {
  after(fn: () => unknown): void;
}

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts a child process whose end is guaranteed: `owner.after` kills it (SIGKILL) if it still runs when
 * the test ends, passed or failed, so that no failure leaves a process behind that keeps the run alive.
 */
export function startProcess(owner: ProcessOwner, args: string[], env: Record<string, string>, options: { readStdout?: boolean } = {}): ServerProcess {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  // Not reading stdout leaves it a pipe nobody drains: a stuck log collector.
  if (options.readStdout !== false) {
    child.stdout!.on('data', (d) => {
      text += d;
    });
  }
  child.stderr!.on('data', (d) => {
    text += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  owner.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    child.stdout!.destroy();
    child.stderr!.destroy();
  });
  return { child, output: () => text, exited };
}

/**
 * Starts the server as `npm start` does, from the bundle in `dist/` (built first if the sources changed
 * since the last build, see ensureBuilt), as a real child process stopped by `owner.after`.
 */
export function startServerProcess(owner: ProcessOwner, env: Record<string, string>, options: { readStdout?: boolean } = {}): ServerProcess {
  ensureBuilt();
  return startProcess(owner, ['dist/main.js'], { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env }, options);
}

/** What `npm run build` reads: a change to any of these makes `dist/` stale. */
const BUILD_INPUTS = ['src', 'dashboard', 'package.json', 'package-lock.json'];
const STAMP = path.join(ROOT, 'dist', '.source-hash');
const LOCK = path.join(ROOT, 'node_modules', '.flagpost-build-lock');

function sourceHash(): string {
  const hash = createHash('sha256');
  const visit = (rel: string) => {
    const full = path.join(ROOT, rel);
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) if (name !== 'node_modules') visit(path.join(rel, name));
    } else {
      hash.update(rel).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  for (const input of BUILD_INPUTS) visit(input);
  return hash.digest('hex');
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Runs `npm run build` unless `dist/` was built from the sources as they are now (a hash of them is kept
 * beside the bundle). Test files run in parallel processes: a lock directory lets one of them build while
 * the others wait, so the build happens once per run, and a bundle is never replaced under a running test.
 */
export function ensureBuilt(): void {
  const wanted = sourceHash();
  const current = () => {
    try {
      return fs.existsSync(path.join(ROOT, 'dist', 'main.js')) && fs.readFileSync(STAMP, 'utf8') === wanted;
    } catch {
      return false;
    }
  };
  if (current()) return;
  for (const deadline = Date.now() + 180_000; ;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock older than any build is left over from a killed run.
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) fs.rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`${LOCK} is held for more than 3 minutes`, { cause: error });
      sleepSync(100);
    }
  }
  try {
    if (current()) return; // another test file built it while this one waited
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' });
    fs.writeFileSync(STAMP, wanted);
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/** Waits until GET /healthz answers `status` (200 by default). */
export async function waitForHealth(port: number, timeoutMs = 15_000, status = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      await res.arrayBuffer();
      if (res.status === status) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${status} from /healthz on port ${port} within ${timeoutMs} ms`);
}

/** A port below the ephemeral range (32768 and up), so that no client socket of the run holds it. */
export const freePort = () => 20_000 + Math.floor(Math.random() * 12_000);
