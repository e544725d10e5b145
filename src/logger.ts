import pino, { type DestinationStream, type Logger } from 'pino';

/** Log output waiting for a slow sink, at most; beyond it lines are dropped and counted. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface ProcessLogger {
  log: Logger;
  /** Lines dropped because the sink (stdout) did not keep up. */
  dropped(): number;
  /**
   * Waits until the lines written so far have left the process, or until `deadlineMs` has passed,
   * whichever comes first; never longer. Called before `process.exit` on shutdown.
   */
  flush(deadlineMs: number): Promise<void>;
}

/** The slice of `process.stdout` the destination uses (a test passes a stream of its own). */
export type LogSink = Pick<NodeJS.WriteStream, 'write' | 'writableLength' | 'once' | 'off' | 'on'>;

/**
 * A pino destination that writes through `sink` (stdout) and never blocks: not the event loop, not a
 * thread, not the exit (issue 8, issue 19). When stdout is a pipe nobody reads (a stuck log collector),
 * lines wait in the stream's buffer up to MAX_BUFFERED_BYTES, then further lines are dropped and counted.
 *
 * Why not sonic-boom: its asynchronous mode writes with `fs.write` on libuv's thread pool. When fd 1 is a
 * blocking pipe (as a parent's `stdio: 'pipe'` hands it over, and nothing in the bundle touched
 * `process.stdout`, which would make it non-blocking), that write blocks its thread until someone reads;
 * `process.exit` then waits for that thread forever (the built server hung at SIGTERM in a futex wait).
 * `process.stdout` writes to a pipe or socket through the event loop on a non-blocking descriptor, so a
 * full pipe only grows `writableLength`, and exit never waits for it.
 */
export function createDestination(sink: LogSink, maxBufferedBytes = MAX_BUFFERED_BYTES) {
  let dropped = 0;
  let broken = false;
  // A closed stdout (the collector went away, EPIPE) must not crash the process: logging just stops.
  sink.on('error', () => {
    broken = true;
  });
  const stream: DestinationStream = {
    write(line: string) {
      if (broken || sink.writableLength > maxBufferedBytes) {
        dropped++;
        return;
      }
      sink.write(line);
    },
  };
  const flush = (deadlineMs: number) =>
    new Promise<void>((resolve) => {
      if (broken || sink.writableLength === 0) return resolve();
      const done = () => {
        clearTimeout(timer);
        sink.off('drain', done);
        resolve();
      };
      const timer = setTimeout(done, deadlineMs);
      sink.once('drain', done);
    });
  return { stream, dropped: () => dropped, flush };
}

/** The process's logger: JSON lines to stdout, written asynchronously and bounded (see createDestination). */
export function createLogger(level: string, sink: LogSink = process.stdout): ProcessLogger {
  const destination = createDestination(sink);
  const log = pino({ level }, destination.stream);
  return { log, dropped: destination.dropped, flush: destination.flush };
}
