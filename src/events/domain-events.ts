import type { Executor } from '../db/database.ts';
import type { DomainEvent, DomainEventOf, DomainEventType } from './domain-event.ts';

/** Runs inside the publisher's transaction; throwing rolls the whole write back. */
export type TransactionHandler<T extends DomainEventType> = (event: DomainEventOf<T>, trx: Executor) => Promise<void>;
/** Runs once the write is committed, before the write's caller gets its answer; it cannot undo the write. */
export type CommitHandler<T extends DomainEventType> = (event: DomainEventOf<T>) => Promise<void> | void;

/** Emits an event of the current transaction: its transaction handlers run now, its commit handlers after the commit. */
export type Emit = (event: DomainEvent) => Promise<void>;

export interface EventsLog {
  error(obj: object, msg: string): void;
}

/**
 * The one way capabilities coordinate (docs/adr/0009-domain-events.md): a capability announces what it
 * did as a typed domain event, and the capabilities that care subscribe to it themselves, in one of two
 * phases. `transaction` subscribers write within the publisher's transaction (data that must change
 * together: a new environment's flags, a deleted flag's feedback, audit entries); `commit` subscribers
 * react once the data is committed (read models, other instances, background workers, live updates).
 */
export class DomainEvents {
  // Kept per type; a handler only ever receives events of its own type.
  private readonly inTransaction = new Map<DomainEventType, Array<(event: DomainEvent, trx: Executor) => Promise<void>>>();
  private readonly afterCommit = new Map<DomainEventType, Array<(event: DomainEvent) => Promise<void> | void>>();

  constructor(private readonly log?: EventsLog) {}

  /** Subscribes to `type` within the publisher's transaction. */
  onTransaction<T extends DomainEventType>(type: T, handler: TransactionHandler<T>): void {
    this.listOf(this.inTransaction, type).push(handler as unknown as (event: DomainEvent, trx: Executor) => Promise<void>);
  }

  /** Subscribes to `type` after its transaction committed. */
  onCommit<T extends DomainEventType>(type: T, handler: CommitHandler<T>): void {
    this.listOf(this.afterCommit, type).push(handler as unknown as (event: DomainEvent) => Promise<void> | void);
  }

  /**
   * Runs `work` in a transaction of `db`. Events it emits reach the transaction subscribers at once (in
   * the same transaction) and the commit subscribers after the commit, in order, before this resolves;
   * a rolled-back transaction notifies no commit subscriber.
   */
  async transaction<R>(db: Executor, work: (trx: Executor, emit: Emit) => Promise<R>): Promise<R> {
    const emitted: DomainEvent[] = [];
    const result = await db.transaction().execute(async (trx) =>
      work(trx, async (event) => {
        await this.runInTransaction(trx, event);
        emitted.push(event);
      }),
    );
    for (const event of emitted) await this.committed(event);
    return result;
  }

  /** For writes whose transaction is run elsewhere (the group commit of submissions): runs the transaction subscribers. */
  async runInTransaction(trx: Executor, event: DomainEvent): Promise<void> {
    for (const handler of this.inTransaction.get(event.type) ?? []) await handler(event, trx);
  }

  /** Tells the commit subscribers about a committed event. A failing subscriber is logged and never fails the write. */
  async committed(event: DomainEvent): Promise<void> {
    for (const handler of this.afterCommit.get(event.type) ?? []) {
      try {
        await handler(event);
      } catch (error) {
        this.log?.error({ err: error, event: event.type }, 'a subscriber to a committed event failed');
      }
    }
  }

  private listOf<H>(map: Map<DomainEventType, H[]>, type: DomainEventType): H[] {
    const list = map.get(type) ?? [];
    map.set(type, list);
    return list;
  }
}
