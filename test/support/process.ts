import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the server (`src/main.ts` through tsx unless `args` say otherwise) as a real child process. */
export function startServerProcess(
  env: Record<string, string>,
  args = ['--import', 'tsx', 'src/main.ts'],
  options: { readStdout?: boolean } = {},
): ServerProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  return { child, output: () => text, exited };
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
