import { AppError, messages } from '../errors.ts';

/**
 * Bounds how many multipart submissions are read and stored at once. With files in the database, a
 * submission's files are held in memory from the first byte until its transaction commits; without a
 * bound, 50 concurrent uploads of five 1 MiB files hold 250 MiB and more (with files in a folder or a
 * bucket, an upload holds at most one 5 MiB part, and the gate bounds the store's concurrent writes). A waiting upload is not read,
 * so its bytes stay in the client's and the kernel's buffers (TCP back-pressure), not in ours.
 *
 * A slot must always come back: a waiter whose client went away is dropped from the queue (`signal`),
 * and the caller releases its slot in a `finally` (issue 8: sixteen vanishing clients froze intake).
 */
export class UploadGate {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(private readonly limit: number) {}

  /**
   * Resolves with a release function once a slot is free; slots are handed out first come, first
   * served. Rejects, holding no slot, when `signal` aborts first (the client disconnected).
   */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw gone();
    if (this.active < this.limit) {
      this.active++;
    } else {
      await new Promise<void>((resolve, reject) => {
        const waiter = {
          grant: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          const at = this.waiting.indexOf(waiter);
          if (at !== -1) this.waiting.splice(at, 1);
          reject(gone());
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(waiter);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next.grant(); // the slot passes straight to the next upload
      else this.active--;
    };
  }

  /** Uploads being read or stored now, and uploads waiting for a slot (for tests and metrics). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}

/** The client is gone; nobody will read this answer, but the error keeps the request's path uniform. */
function gone(): AppError {
  return new AppError('validation', messages.formUnreadable);
}
