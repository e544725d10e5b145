// The messages between the primary and its workers over the cluster module's IPC channel
// (docs/adr/0029-workers.md). Every message carries `fp`, so that nothing else on the channel is mistaken
// for one of them.

/** Rate limit counts of one batch: `[current, ttl in ms]` per key, in the order of the keys. */
export type CountStates = Array<[number, number]>;

export type ToPrimary =
  /** The worker can take messages from the other workers (sent first, before the worker composes its services). */
  | { fp: 'hello' }
  /** The worker listens and answers. */
  | { fp: 'ready' }
  /** Count one request of each key (a key may repeat) in fixed windows of `windowMs`. */
  | { fp: 'count'; seq: number; keys: string[]; windowMs: number }
  /** Hand `body` to every other worker; answered by `delivered` once each applied it (or is gone). */
  | { fp: 'broadcast'; seq: number; body: unknown }
  /** This worker applied the peer message `seq` of the primary. */
  | { fp: 'ack'; seq: number };

export type ToWorker = { fp: 'counted'; seq: number; states: CountStates } | { fp: 'peer'; seq: number; body: unknown } | { fp: 'delivered'; seq: number };

/** What the primary tells a worker it forks, through its environment. */
export const SLOT_VARIABLE = 'FLAGPOST_WORKER_SLOT';
export const REUSE_PORT_VARIABLE = 'FLAGPOST_WORKER_REUSE_PORT';

export function isMessage<T extends { fp: string }>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && typeof (value as { fp?: unknown }).fp === 'string';
}
