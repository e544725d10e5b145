import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import { loadPg } from '../optional-packages.ts';
import type { Db } from '../db/database.ts';
import { LoopBackoff, type OutageLog } from '../db/outage.ts';
import type { FlagChange, FlagChanges } from './flag-changes.ts';
import type { FlagReadModel } from './flag.read-model.ts';

// Several instances on one PostgreSQL (contract D3): a write applies its change to this instance's read
// model before answering, then tells the others with NOTIFY; each instance LISTENs on a dedicated
// connection. Notifications are lost while that connection is down, so (1) every (re)connection clears
// the read model, and (2) a periodic re-check compares a cheap fingerprint of every environment's flags
// and of the set of environments, and invalidates what differs, for the cases nobody noticed (a half-open
// TCP connection, a NOTIFY that failed after its write committed).

export interface PgFlagChangesOptions {
  db: Db;
  /** Connection string of the listener; the same as the pool's, so it sees the same search_path. */
  databaseUrl: string;
  reads: FlagReadModel;
  /** Milliseconds between two re-checks (default 5000). */
  recheckMs?: number;
  /** Problems of the change feed are logged once per outage; they never stop the instance. */
  log: OutageLog;
}

interface Notice {
  from: string;
  change: FlagChange;
  /** When the sender sent it, epoch ms (absent from instances older than issue 23). */
  at?: number;
}

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;
const CONNECT_TIMEOUT_MS = 5000;

export class PgFlagChanges implements FlagChanges {
  /** Tells this instance's own notifications apart from the others'. */
  private readonly instanceId = randomUUID();
  private channel = 'flagpost_flag_changes';
  private listener: pg.Client | undefined;
  private listenerPid: number | undefined;
  private reconnectDelay = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private fingerprints: Map<string, string> | undefined;
  private environmentCount: number | undefined;
  private stopped = false;
  private readonly listening: LoopBackoff;
  readonly recheckEveryMs: number;

  constructor(private readonly options: PgFlagChangesOptions) {
    this.listening = new LoopBackoff('flag change listener', options.log);
    this.recheckEveryMs = options.recheckMs ?? 5000;
  }

  /** Connects the listener (waits for the first attempt only); the scheduler runs the re-check from then on. */
  async start(): Promise<void> {
    // Channels are per database, not per schema: instances on other schemas of the same database
    // must not hear this one.
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(this.options.db);
    this.channel = `flagpost_flag_changes:${rows[0]?.schema ?? 'public'}`.slice(0, 63);
    await this.connect();
  }

  async publish(change: FlagChange): Promise<void> {
    this.options.reads.apply(change);
    // `at`: when it was sent (epoch ms), for the propagation delay the receivers measure (metrics).
    const notice: Notice = { from: this.instanceId, change, at: Date.now() };
    try {
      await sql`select pg_notify(${this.channel}, ${JSON.stringify(notice)})`.execute(this.options.db);
    } catch (error) {
      // The write is committed and this instance is up to date; the others catch up at the next re-check.
      this.options.log.warn({ err: error }, 'NOTIFY of a flag change failed; other instances catch up at their next re-check');
    }
  }

  /** Backend process id of the LISTEN connection (for operators and tests), undefined while down. */
  get listenerProcessId(): number | undefined {
    return this.listenerPid;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const client = this.listener;
    this.listener = undefined;
    this.listenerPid = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new (loadPg().Client)({
      connectionString: this.options.databaseUrl,
      application_name: 'flagpost-listener',
      // A database that vanished without closing the connection is noticed, not waited on forever.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (error) this.listening.failed(error);
      if (this.listener === client) {
        this.listener = undefined;
        this.listenerPid = undefined;
      }
      client.end().catch(() => {});
      this.scheduleReconnect();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === this.channel && message.payload) this.receive(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${quoteIdentifier(this.channel)}`);
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      if (this.stopped || lost) {
        await client.end().catch(() => {});
        return;
      }
      this.listener = client;
      this.listenerPid = rows[0]?.pid;
      this.reconnectDelay = RECONNECT_MIN_MS;
      this.listening.succeeded();
      // Whatever happened while nobody listened is unknown: forget it all, reads reload on demand.
      this.options.reads.clear();
    } catch (error) {
      onLost(error);
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }

  private receive(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (notice.from === this.instanceId) return;
    const { change } = notice;
    if (typeof notice.at === 'number') this.options.reads.observer?.changePropagated((Date.now() - notice.at) / 1000);
    if (change?.kind === 'keys') this.options.reads.apply({ kind: 'keys' });
    else if (change?.kind === 'environment' && typeof change.environmentId === 'string') this.options.reads.apply(change);
  }

  /**
   * The safety net: a fingerprint per environment (md5 over slug and updated_at of every flag, so a
   * creation, a change or a deletion all show) and the number of environments. The first run only
   * records them; a later difference invalidates that environment, or every remembered unknown key.
   */
  async recheck(): Promise<void> {
    const { rows } = await sql<{ environment_id: string; fingerprint: string }>`
      select environment_id, md5(string_agg(slug || '@' || updated_at, ',' order by slug)) as fingerprint
      from flags group by environment_id`.execute(this.options.db);
    const counted = await sql<{ n: string }>`select count(*) as n from environments`.execute(this.options.db);
    const environmentCount = Number(counted.rows[0]?.n ?? 0);
    const next = new Map(rows.map((r) => [r.environment_id, r.fingerprint]));
    const previous = this.fingerprints;
    if (previous) {
      for (const id of new Set([...previous.keys(), ...next.keys()])) {
        if (previous.get(id) !== next.get(id)) this.options.reads.apply({ kind: 'environment', environmentId: id });
      }
      if (environmentCount !== this.environmentCount) this.options.reads.apply({ kind: 'keys' });
    }
    this.fingerprints = next;
    this.environmentCount = environmentCount;
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
