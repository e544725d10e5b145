import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { isCurrent, sourceHash } from '../../scripts/build.ts';

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

/**
 * Runs the build (scripts/build.ts) unless `dist/` was built from the sources as they are now: the
 * script keeps a hash of them beside the bundle, lets one build run at a time (test files run in
 * parallel processes) and renames a finished build into place, so a bundle is never half written.
 */
export function ensureBuilt(): void {
  if (isCurrent(path.join(ROOT, 'dist'), sourceHash())) return;
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: ROOT, stdio: 'pipe' });
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
