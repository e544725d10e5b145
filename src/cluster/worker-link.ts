import cluster from 'node:cluster';
import { type CountStates, isMessage, REUSE_PORT_VARIABLE, SLOT_VARIABLE, type ToPrimary, type ToWorker } from './protocol.ts';

/** How long a write waits for the other workers to apply its change before answering anyway. */
const BROADCAST_WAIT_MS = 2000;
/** How long a rate limit count waits for the primary before the request is let through uncounted. */
const COUNT_WAIT_MS = 1000;

/**
 * A worker's side of the channel to the primary (docs/adr/0029-workers.md): which slot it fills (slot 1
 * runs the periodic jobs), whether it listens with `reusePort`, messages to the other workers and the
 * rate limit counters the primary keeps for all of them.
 */
export class WorkerLink {
  private seq = 0;
  private readonly waiting = new Map<number, { done: (message: ToWorker) => void; timer: NodeJS.Timeout }>();
  private readonly peerHandlers: Array<(body: unknown) => void> = [];

  private constructor(
    /** 1..n; a replacement takes the slot of the worker it replaces. */
    readonly slot: number,
    readonly reusePort: boolean,
  ) {
    process.on('message', (message: unknown) => {
      if (isMessage<ToWorker>(message)) this.receive(message);
    });
    this.send({ fp: 'hello' });
  }

  /** The link of this process when the primary forked it, otherwise undefined (one process, FLAGPOST_WORKERS=1). */
  static ofThisProcess(): WorkerLink | undefined {
    if (!cluster.isWorker) return undefined;
    const slot = Number(process.env[SLOT_VARIABLE]);
    if (!Number.isInteger(slot) || slot < 1) return undefined;
    return new WorkerLink(slot, process.env[REUSE_PORT_VARIABLE] === '1');
  }

  /** The periodic jobs (outbox polling, retention and whatever runs on a timer) run in slot 1 only. */
  get runsJobs(): boolean {
    return this.slot === 1;
  }

  /** Tells the primary that this worker listens. */
  ready(): void {
    this.send({ fp: 'ready' });
  }

  /**
   * Hands `body` to every other worker's `onPeerMessage` handlers; resolves once each has run them (a
   * worker that exits meanwhile counts as done), or after BROADCAST_WAIT_MS at most.
   */
  broadcast(body: unknown): Promise<void> {
    return new Promise((resolve) => {
      const seq = this.expect(BROADCAST_WAIT_MS, () => resolve());
      if (!this.send({ fp: 'broadcast', seq, body })) this.settle(seq);
    });
  }

  onPeerMessage(handler: (body: unknown) => void): void {
    this.peerHandlers.push(handler);
  }

  /** Counts one request of each key in the primary's fixed windows; rejects when the primary does not answer in time. */
  count(keys: string[], windowMs: number): Promise<CountStates> {
    return new Promise((resolve, reject) => {
      const seq = this.expect(COUNT_WAIT_MS, (message) => {
        if (message?.fp === 'counted') resolve(message.states);
        else reject(new Error('the primary did not count in time'));
      });
      if (!this.send({ fp: 'count', seq, keys, windowMs })) this.settle(seq);
    });
  }

  private expect(waitMs: number, done: (message?: ToWorker) => void): number {
    const seq = ++this.seq;
    const timer = setTimeout(() => this.settle(seq), waitMs);
    timer.unref();
    this.waiting.set(seq, { done: done as (message: ToWorker) => void, timer });
    return seq;
  }

  private settle(seq: number, message?: ToWorker): void {
    const entry = this.waiting.get(seq);
    if (!entry) return;
    this.waiting.delete(seq);
    clearTimeout(entry.timer);
    entry.done(message as ToWorker);
  }

  private receive(message: ToWorker): void {
    if (message.fp === 'peer') {
      for (const handler of this.peerHandlers) handler(message.body);
      this.send({ fp: 'ack', seq: message.seq });
    } else {
      this.settle(message.seq, message);
    }
  }

  private send(message: ToPrimary): boolean {
    if (!process.connected || !process.send) return false;
    process.send(message);
    return true;
  }
}
