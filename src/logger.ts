import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type { SonicBoom as SonicBoomType, SonicBoomOpts } from 'sonic-boom';

// sonic-boom is CommonJS whose type declarations do not match its default export under NodeNext.
const SonicBoom = createRequire(import.meta.url)('sonic-boom') as new (options: SonicBoomOpts) => SonicBoomType;

/** Log output waiting for a slow sink, at most; beyond it lines are dropped and counted. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface ProcessLogger {
  log: Logger;
  /** Lines dropped because the sink (stdout) did not keep up. */
  dropped(): number;
}

/**
 * The process's logger: JSON lines to stdout, written asynchronously. Logging never blocks the event
 * loop and never holds more than MAX_BUFFERED_BYTES: when stdout is a pipe nobody reads (a stuck log
 * collector), further lines are dropped and counted (issue 8). The destination is built here rather
 * than with pino.destination(), which would flush synchronously at exit and so hang the shutdown on
 * that same stuck pipe.
 */
export function createLogger(level: string): ProcessLogger {
  let dropped = 0;
  const sink = new SonicBoom({ fd: 1, sync: false, maxLength: MAX_BUFFERED_BYTES, minLength: 0 });
  sink.on('drop', () => {
    dropped++;
  });
  // A closed stdout (the collector went away) must not crash the process: logging just stops.
  sink.on('error', () => {});
  const log = pino({ level }, sink);
  return { log, dropped: () => dropped };
}
