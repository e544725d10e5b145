import { clientKey } from '../http/client-key.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FlagReadModel } from './flag.read-model.ts';

// Live updates (issue 10): one Server-Sent Events stream per client and environment, in OFREP's event
// format. A stream carries no flags, only "something changed, refetch" with the environment's new
// version (the snapshot's `version`, sent as OFREP's `etag`), so that the client's next bulk evaluation
// is one request. Every change applied to the read model (this
// instance's writes, and on PostgreSQL the other instances' through LISTEN/NOTIFY) reaches the streams.

export const STREAM_PATH = '/ofrep/v1/events';
/** The headers of every event stream, before its x-request-id (name, value, name, value...). */
const STREAM_HEADERS = [
  ['content-type', 'text/event-stream; charset=utf-8'],
  ['cache-control', 'no-store'],
  ['x-accel-buffering', 'no'],
  ['connection', 'keep-alive'],
  ['access-control-allow-origin', '*'],
].flat();

/**
 * The stream URL carries what authenticates it, since a browser's EventSource cannot set headers: the
 * keys and an HMAC of them under a secret of the deployment. The keys alone (which ship in web pages)
 * do not give the URL; only an evaluation answered with them does.
 */
export class StreamTokens {
  constructor(private readonly key: Buffer) {}

  uriOf(projectKey: string, environmentKey: string): string {
    const keys = Buffer.from(`${projectKey}\n${environmentKey}`).toString('base64url');
    return `${STREAM_PATH}?stream=${keys}.${this.mac(keys)}`;
  }

  /** The keys of a valid token, or undefined. */
  parse(token: string): { projectKey: string; environmentKey: string } | undefined {
    const dot = token.indexOf('.');
    if (dot < 1 || token.length > 1000) return undefined;
    const keys = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.mac(keys));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const [projectKey, environmentKey, ...rest] = Buffer.from(keys, 'base64url').toString().split('\n');
    if (!projectKey || !environmentKey || rest.length > 0) return undefined;
    return { projectKey, environmentKey };
  }

  private mac(keys: string): string {
    return createHmac('sha256', this.key).update(keys).digest('base64url').slice(0, 32);
  }
}

interface Stream {
  res: ServerResponse;
  /** The client's address as given to open(); kept as its client key. */
  client: string;
  projectKey: string;
  environmentKey: string;
}

export interface StreamLimits {
  /** Open streams one client address may hold. */
  perClient: number;
  /** Open streams of this process at most, over all clients (issue 29); undefined: no cap. */
  total?: number;
  /**
   * A stream is ended after this long (plus up to a tenth, so that streams opened together do not all
   * reconnect together); the client reconnects at once. Undefined: never.
   */
  maxAgeMs?: number;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
}

/** Why a stream is not opened: the client holds its share (429), or the process holds its cap (503). */
export type StreamRefusal = 'client' | 'total';

export class OfrepStreams {
  private readonly byEnvironment = new Map<string, Set<Stream>>();
  private readonly perClient = new Map<string, number>();
  /** Streams open now, over all environments. */
  private count = 0;
  private readonly pending = new Set<string>();
  private everything = false;
  private flushing = false;
  /** The heartbeat of open streams, from the first stream on (composing the read path starts no timer). */
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly reads: FlagReadModel,
    private readonly limits: StreamLimits,
  ) {
    reads.watch((environmentId) => this.changed(environmentId));
  }

  /** Streams open now. */
  get size(): number {
    return this.count;
  }

  /** Whether the client at address `ip` may open one more stream (counted per client key: IPv6 per /64). */
  admits(ip: string): boolean {
    return this.refusal(ip) === undefined;
  }

  /** Why the client at `ip` may not open one more stream now, or undefined when it may. */
  refusal(ip: string): StreamRefusal | undefined {
    if (this.closed) return 'total';
    if ((this.perClient.get(clientKey(ip)) ?? 0) >= this.limits.perClient) return 'client';
    if (this.limits.total !== undefined && this.count >= this.limits.total) return 'total';
    return undefined;
  }

  /**
   * Takes over `res` as an event stream of one environment. `lastEventId` is the id of the last event the
   * client saw (a version): when the flags changed since, it is told at once. Opened by the route
   * (ofrep.routes.ts) or, for a warm snapshot, by the fast path (flag.fast-path.ts), with the same answer.
   */
  open(res: ServerResponse, stream: Omit<Stream, 'res'>, environmentId: string, version: string, lastEventId: string | undefined, requestId: string): void {
    const entry: Stream = { res, ...stream, client: clientKey(stream.client) };
    if (!this.heartbeat && !this.closed) {
      this.heartbeat = setInterval(() => this.beat(), this.limits.heartbeatMs);
      this.heartbeat.unref();
    }
    let set = this.byEnvironment.get(environmentId);
    if (!set) this.byEnvironment.set(environmentId, (set = new Set()));
    set.add(entry);
    this.count += 1;
    this.perClient.set(entry.client, (this.perClient.get(entry.client) ?? 0) + 1);
    res.socket?.setTimeout(0);
    res.socket?.setNoDelay(true);
    // Every header in this one call, none set before it: Node then keeps no header map for the life
    // of the stream (about 0.5 kB of each of thousands of streams), only the head it wrote.
    res.writeHead(200, [...STREAM_HEADERS, 'x-request-id', requestId]);
    res.write(`retry: 3000\n: flagpost event stream\n\n`);
    if (lastEventId !== undefined && lastEventId !== version) res.write(eventOf(version, undefined));
    // At its age the stream ends with a short reconnection delay: the client comes back (perhaps to
    // another instance), and no connection is held for ever.
    const { maxAgeMs } = this.limits;
    const aged =
      maxAgeMs === undefined
        ? undefined
        : setTimeout(() => res.end(`retry: ${500 + Math.floor(Math.random() * 1000)}\n\n`), maxAgeMs + Math.floor(Math.random() * (maxAgeMs / 10)));
    aged?.unref();
    res.on('close', () => {
      clearTimeout(aged);
      this.count -= 1;
      set.delete(entry);
      if (set.size === 0 && this.byEnvironment.get(environmentId) === set) this.byEnvironment.delete(environmentId);
      const left = (this.perClient.get(entry.client) ?? 1) - 1;
      if (left <= 0) this.perClient.delete(entry.client);
      else this.perClient.set(entry.client, left);
    });
  }

  /**
   * Ends every stream (the drain on SIGTERM, then shutdown): clients reconnect, through the load balancer
   * to another instance (this one's /readyz says 503 by then) or to this one after its restart. Each is
   * given a reconnection delay of 1 to 3 s so that they do not all arrive at once.
   */
  closeAll(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const set of this.byEnvironment.values()) {
      for (const { res } of set) res.end(`retry: ${1000 + Math.floor(Math.random() * 2000)}\n\n`);
    }
  }

  private changed(environmentId: string | undefined): void {
    if (environmentId === undefined) this.everything = true;
    else if (this.byEnvironment.has(environmentId)) this.pending.add(environmentId);
    else return;
    if (this.flushing) return;
    this.flushing = true;
    // Changes of the same turn (a flag created in three environments) are told once per environment.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    try {
      while (this.everything || this.pending.size > 0) {
        const environments = this.everything ? [...this.byEnvironment.keys()] : [...this.pending];
        this.everything = false;
        this.pending.clear();
        for (const environmentId of environments) await this.tell(environmentId);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Sends the environment's new version and time to its streams. */
  private async tell(environmentId: string): Promise<void> {
    const set = this.byEnvironment.get(environmentId);
    const first = set?.values().next().value;
    if (!set || !first) return;
    let event: string;
    try {
      const snapshot = await this.reads.get(first.projectKey, first.environmentKey);
      event = snapshot ? eventOf(snapshot.version, snapshot.lastModified) : eventOf(undefined, undefined);
    } catch {
      // The database is away: the clients refetch and get their answer (or an error) from the read path.
      event = eventOf(undefined, undefined);
    }
    for (const { res } of set) res.write(event);
  }

  private beat(): void {
    for (const set of this.byEnvironment.values()) for (const { res } of set) res.write(': ping\n\n');
  }
}

/** A refetch event; `version` is OFREP's `etag` (base64url, so no quoting) and the event id. */
function eventOf(version: string | undefined, lastModified: number | undefined): string {
  const data: Record<string, unknown> = { type: 'refetchEvaluation' };
  if (version) data.etag = version;
  if (lastModified) data.lastModified = lastModified;
  return `${version ? `id: ${version}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}
