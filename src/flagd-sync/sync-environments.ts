import type { Logger } from 'pino';
import { message } from '../errors.ts';
import { loadGrpc } from '../optional-packages.ts';
import { hashSyncToken, type SyncGrant, tokenOfSelector } from './flagd-sync-token.ts';
import type { FlagdSyncService } from './flagd-sync.service.ts';

interface Stream {
  send: (document: string) => void;
  fail: (error: Error) => void;
}

interface Environment {
  grant: SyncGrant;
  streams: Set<Stream>;
  /** Set while a refresh failed; the next try is scheduled. */
  retry: NodeJS.Timeout | undefined;
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;

/**
 * The environments providers are synced to, each with its open streams and its last good flagd
 * definition, kept in memory while a stream is open (docs/adr/0027-flagd-sync.md).
 */
export class SyncEnvironments {
  private readonly byId = new Map<string, Environment>();
  /** Grants of valid tokens by token hash, so that providers can reconnect while the database is away. */
  private readonly grants = new Map<string, SyncGrant>();
  /**
   * The last definition read of each environment a provider synced, by environment id: served while the
   * database is away, also to providers that reconnect meanwhile. One entry per environment with a token.
   */
  private readonly documents = new Map<string, string>();
  private readonly pending = new Set<string>();
  private everything = false;
  private flushing = false;
  /** The token re-check, from `startRecheck()` on (the server's listen: composing starts no timer). */
  private recheck: NodeJS.Timeout | undefined;
  private retryDelay = RETRY_MIN_MS;

  constructor(
    private readonly service: FlagdSyncService,
    private readonly log: Logger,
    private readonly recheckMs: number,
  ) {}

  /** Re-checks the tokens of open streams and known grants every `recheckMs`, until `closeAll`. */
  startRecheck(): void {
    if (this.recheck) return;
    this.recheck = setInterval(() => void this.recheckTokens(), this.recheckMs);
    this.recheck.unref();
  }

  get streamCount(): number {
    let n = 0;
    for (const env of this.byId.values()) n += env.streams.size;
    return n;
  }

  /** The grant of a selector; a token seen valid before is trusted while the database does not answer. */
  async grantOf(selector: string): Promise<SyncGrant | undefined> {
    const token = tokenOfSelector(selector);
    if (!token) return undefined;
    try {
      const grant = await this.service.grantOf(selector);
      if (grant) this.grants.set(grant.tokenHash, grant);
      else this.grants.delete(hashSyncToken(token));
      return grant;
    } catch (error) {
      const known = this.grants.get(hashSyncToken(token));
      if (known) return known;
      throw error;
    }
  }

  /** The environment's definition now: read again, or the last good one when the database is away. */
  async current(grant: SyncGrant): Promise<string | undefined> {
    try {
      const document = await this.service.definitionOf(grant);
      this.documents.set(grant.environmentId, document);
      return document;
    } catch (error) {
      this.log.warn({ err: error }, 'flagd sync: definition read failed, serving the last one');
      return this.documents.get(grant.environmentId);
    }
  }

  /** Adds a stream and sends it the current definition; undefined when there is none to send. */
  async open(grant: SyncGrant, send: Stream['send'], fail: Stream['fail']): Promise<{ remove: () => void } | undefined> {
    let env = this.byId.get(grant.environmentId);
    if (!env) {
      env = { grant, streams: new Set(), retry: undefined };
      this.byId.set(grant.environmentId, env);
    }
    const stream: Stream = { send, fail };
    env.streams.add(stream);
    const remove = () => {
      env.streams.delete(stream);
      if (env.streams.size === 0 && this.byId.get(grant.environmentId) === env) {
        clearTimeout(env.retry);
        this.byId.delete(grant.environmentId);
      }
    };
    const document = await this.current(grant);
    if (document === undefined) {
      remove();
      return undefined;
    }
    // A change read meanwhile may have replaced the document: the stream starts from the newest.
    if (env.streams.has(stream)) send(this.documents.get(grant.environmentId) ?? document);
    return { remove };
  }

  /** A change of an environment (or of all: `undefined`): its streams get the new definition. */
  changed(environmentId: string | undefined): void {
    if (environmentId === undefined) this.everything = true;
    else if (this.byId.has(environmentId)) this.pending.add(environmentId);
    else return;
    if (this.flushing) return;
    this.flushing = true;
    // Changes of one turn (a flag created in three environments) are sent once per environment.
    setImmediate(() => void this.flush());
  }

  /** Ends every stream with `error` (shutdown). */
  closeAll(error: Error): void {
    clearInterval(this.recheck);
    for (const env of this.byId.values()) {
      clearTimeout(env.retry);
      for (const stream of env.streams) stream.fail(error);
    }
    this.byId.clear();
  }

  private async flush(): Promise<void> {
    try {
      while (this.everything || this.pending.size > 0) {
        const ids = this.everything ? [...this.byId.keys()] : [...this.pending];
        this.everything = false;
        this.pending.clear();
        for (const id of ids) await this.refresh(id);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Reads the environment's definition again and sends it when it differs from the last one sent. */
  private async refresh(environmentId: string): Promise<void> {
    const env = this.byId.get(environmentId);
    if (!env) return;
    let document: string;
    try {
      document = await this.service.definitionOf(env.grant);
    } catch (error) {
      // The database is away (or the environment went): the streams keep the last definition; try again.
      if (!env.retry) {
        this.log.warn({ err: error, environmentId }, 'flagd sync: definition read failed, retrying');
        const delay = this.retryDelay;
        this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS);
        env.retry = setTimeout(() => {
          env.retry = undefined;
          this.changed(environmentId);
        }, delay);
        env.retry.unref();
      }
      return;
    }
    this.retryDelay = RETRY_MIN_MS;
    if (document === this.documents.get(environmentId)) return;
    this.documents.set(environmentId, document);
    for (const stream of env.streams) stream.send(document);
  }

  /** Ends the streams whose token was rotated or revoked, on this instance or another. */
  private async recheckTokens(): Promise<void> {
    const hashes = new Set([...this.grants.keys(), ...[...this.byId.values()].map((env) => env.grant.tokenHash)]);
    let live: Set<string>;
    try {
      live = await this.service.liveHashes([...hashes]);
    } catch {
      return; // the database is away: keep serving, check again later
    }
    for (const [hash, grant] of this.grants) {
      if (live.has(hash)) continue;
      this.grants.delete(hash);
      this.documents.delete(grant.environmentId);
    }
    for (const [id, env] of this.byId) {
      if (live.has(env.grant.tokenHash)) continue;
      this.grants.delete(env.grant.tokenHash);
      this.documents.delete(id);
      const error = Object.assign(new Error(message('flagdSyncRefused')), { code: loadGrpc().status.UNAUTHENTICATED, details: message('flagdSyncRefused') });
      clearTimeout(env.retry);
      this.byId.delete(id);
      for (const stream of env.streams) stream.fail(error);
    }
  }
}
