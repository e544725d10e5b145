/**
 * Bounds how many multipart submissions are read and stored at once. Files live in the database, so a
 * submission's files are held in memory from the first byte until its transaction commits; without a
 * bound, 50 concurrent uploads of five 1 MiB files hold 250 MiB and more. A waiting upload is not read,
 * so its bytes stay in the client's and the kernel's buffers (TCP back-pressure), not in ours.
 */
export class UploadGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  /** Resolves with a release function once a slot is free; slots are handed out first come, first served. */
  async acquire(): Promise<() => void> {
    if (this.active < this.limit) {
      this.active++;
    } else {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight to the next upload
      else this.active--;
    };
  }

  /** Uploads being read or stored now, and uploads waiting for a slot (for tests and metrics). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}
