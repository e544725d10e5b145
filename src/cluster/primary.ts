import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { openDb } from '../db/connect.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { MemoryStore } from '../http/rate-limit-stores.ts';
import { createLogger } from '../logger.ts';
import { supportsReusePort } from './listen-mode.ts';
import { type CountStates, isMessage, REUSE_PORT_VARIABLE, SLOT_VARIABLE, type ToPrimary, type ToWorker } from './protocol.ts';

/** A peer message every worker has not applied within this long is given up on (the writer answers anyway). */
const BROADCAST_TIMEOUT_MS = 1000;
/** Restart delays of a worker that keeps crashing: 250 ms, doubled per crash, at most 30 s. */
const RESTART_MIN_MS = 250;
const RESTART_MAX_MS = 30_000;
/** A worker that served this long before it crashed restarts without delay history. */
const HEALTHY_AFTER_MS = 30_000;
/** Workers drain for 10 s at most (main.ts); the primary waits a little longer before it kills them. */
const DRAIN_MS = 12_000;
const LOG_FLUSH_MS = 1000;

interface Slot {
  readonly slot: number;
  worker: Worker | undefined;
  readyAt: number | undefined;
  crashes: number;
  restartTimer: NodeJS.Timeout | undefined;
}

interface PendingBroadcast {
  origin: Worker;
  originSeq: number;
  waiting: Set<number>;
  timer: NodeJS.Timeout;
}

/**
 * The primary of FLAGPOST_WORKERS > 1 (docs/adr/0029-workers.md): migrates the database once, forks the
 * workers, replaces a crashed one with backoff, relays changes between workers, keeps the rate limit
 * counters of all of them, and drains them all on SIGTERM. It serves no request itself.
 */
export async function runPrimary(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const log = logger.log.child({ role: 'primary' });
  const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  const reusePort = supportsReusePort(process.versions.node, process.platform);
  const primary = new Primary(config.workers, reusePort, log);
  const stop = (signal: string) =>
    void primary.stop(signal).then(async (code) => {
      await logger.flush(LOG_FLUSH_MS);
      process.exit(code);
    });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  primary.start(async () => {
    await logger.flush(LOG_FLUSH_MS);
    process.exit(1);
  });
}

class Primary {
  private readonly slots: Slot[];
  private readonly counters = new MemoryStore(200_000);
  private readonly pending = new Map<number, PendingBroadcast>();
  private readonly linked = new Set<number>();
  private relaySeq = 0;
  private started = false;
  private stopping = false;
  private failStart: () => void = () => {};

  constructor(
    private readonly workers: number,
    private readonly reusePort: boolean,
    private readonly log: Logger,
  ) {
    this.slots = Array.from({ length: workers }, (_, i) => ({ slot: i + 1, worker: undefined, readyAt: undefined, crashes: 0, restartTimer: undefined }));
  }

  /** Forks every worker; `failStart` runs when one of them exits before all of them listened once. */
  start(failStart: () => void): void {
    this.failStart = failStart;
    cluster.on('message', (worker, message: unknown) => {
      if (isMessage<ToPrimary>(message)) this.receive(worker, message);
    });
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal));
    for (const slot of this.slots) this.fork(slot);
  }

  /** Sends SIGTERM to every worker and waits for them; 0 when all of them drained and exited 0. */
  async stop(signal: string): Promise<number> {
    if (this.stopping) return new Promise(() => {});
    this.stopping = true;
    this.log.info({ signal }, 'stopping the workers');
    const exits: Array<Promise<boolean>> = [];
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      const worker = slot.worker;
      if (!worker || worker.isDead()) continue;
      // A worker still starting has no handler yet and ends by the signal itself: it had nothing to drain.
      exits.push(new Promise((resolve) => worker.once('exit', (code: number | null, signal: string | null) => resolve(code === 0 || signal === 'SIGTERM'))));
      worker.process.kill('SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), DRAIN_MS);
    });
    const result = await Promise.race([Promise.all(exits), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.log.error('workers did not stop in time; killing them');
      for (const slot of this.slots) if (slot.worker && !slot.worker.isDead()) slot.worker.process.kill('SIGKILL');
      return 1;
    }
    const clean = result.every(Boolean);
    this.log.info({ clean }, 'stopped');
    return clean ? 0 : 1;
  }

  private fork(slot: Slot): void {
    slot.restartTimer = undefined;
    slot.readyAt = undefined;
    slot.worker = cluster.fork({ [SLOT_VARIABLE]: String(slot.slot), [REUSE_PORT_VARIABLE]: this.reusePort ? '1' : '0' });
  }

  private slotOf(worker: Worker): Slot | undefined {
    return this.slots.find((slot) => slot.worker === worker);
  }

  private receive(worker: Worker, message: ToPrimary): void {
    switch (message.fp) {
      case 'hello':
        this.linked.add(worker.id);
        return;
      case 'ready':
        return this.ready(worker);
      case 'count':
        return this.count(worker, message.seq, message.keys, message.windowMs);
      case 'broadcast':
        return this.broadcast(worker, message.seq, message.body);
      case 'ack':
        return this.acknowledged(worker, message.seq);
    }
  }

  private ready(worker: Worker): void {
    const slot = this.slotOf(worker);
    if (!slot) return;
    slot.readyAt = Date.now();
    this.log.info({ slot: slot.slot, workerPid: worker.process.pid }, 'worker listening');
    if (!this.started && this.slots.every((s) => s.readyAt !== undefined)) {
      this.started = true;
      this.log.info({ workers: this.workers, listen: this.reusePort ? 'reusePort' : 'cluster' }, 'Flagpost is ready');
    }
  }

  private count(worker: Worker, seq: number, keys: string[], windowMs: number): void {
    const states: CountStates = [];
    // MemoryStore answers synchronously.
    for (const key of keys) this.counters.incr(key, (_error, state) => states.push([state.current, state.ttl]), windowMs);
    this.send(worker, { fp: 'counted', seq, states });
  }

  private broadcast(origin: Worker, originSeq: number, body: unknown): void {
    const seq = ++this.relaySeq;
    const waiting = new Set<number>();
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (!worker || worker === origin || !this.linked.has(worker.id) || !worker.isConnected()) continue;
      if (this.send(worker, { fp: 'peer', seq, body })) waiting.add(worker.id);
    }
    if (waiting.size === 0) return void this.send(origin, { fp: 'delivered', seq: originSeq });
    const timer = setTimeout(() => {
      this.log.warn(
        { workers: [...(this.pending.get(seq)?.waiting ?? [])] },
        'workers did not apply a change within 1 s; they catch up at their next re-check',
      );
      this.settle(seq);
    }, BROADCAST_TIMEOUT_MS);
    timer.unref();
    this.pending.set(seq, { origin, originSeq, waiting, timer });
  }

  private acknowledged(worker: Worker, seq: number): void {
    const pending = this.pending.get(seq);
    if (!pending) return;
    pending.waiting.delete(worker.id);
    if (pending.waiting.size === 0) this.settle(seq);
  }

  private settle(seq: number): void {
    const pending = this.pending.get(seq);
    if (!pending) return;
    this.pending.delete(seq);
    clearTimeout(pending.timer);
    this.send(pending.origin, { fp: 'delivered', seq: pending.originSeq });
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    this.linked.delete(worker.id);
    for (const [seq, pending] of this.pending) {
      if (pending.waiting.delete(worker.id) && pending.waiting.size === 0) this.settle(seq);
    }
    const slot = this.slotOf(worker);
    if (!slot || this.stopping) return;
    if (!this.started) {
      this.log.error({ slot: slot.slot, code, signal }, 'a worker exited while starting; stopping');
      this.stopping = true;
      for (const other of this.slots) if (other.worker && !other.worker.isDead()) other.worker.process.kill('SIGTERM');
      return this.failStart();
    }
    const now = Date.now();
    if (slot.readyAt !== undefined && now - slot.readyAt >= HEALTHY_AFTER_MS) slot.crashes = 0;
    slot.crashes++;
    const delay = Math.min(RESTART_MAX_MS, RESTART_MIN_MS * 2 ** (slot.crashes - 1));
    this.log.error({ slot: slot.slot, workerPid: worker.process.pid, code, signal, restartInMs: delay }, 'worker exited; replacing it');
    slot.worker = undefined;
    slot.restartTimer = setTimeout(() => this.fork(slot), delay);
  }

  private send(worker: Worker, message: ToWorker): boolean {
    if (!worker.isConnected()) return false;
    try {
      worker.send(message);
      return true;
    } catch {
      return false;
    }
  }
}
