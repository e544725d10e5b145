import net from 'node:net';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';

import { message } from '../errors.ts';
import { loadGrpc, loadProtoLoader } from '../optional-packages.ts';
import { type FlagUsageTally, type ReasonCounts, reasonCounts } from '../evaluation/index.ts';
import { clientKey } from '../http/client-key.ts';
import type { SyncGrant } from './flagd-sync-token.ts';
import type { FlagdSyncService } from './flagd-sync.service.ts';
import { SyncEnvironments } from './sync-environments.ts';
import { SyncRefusals } from './sync-refusals.ts';

// flagd's sync service (issue 21, docs/adr/0027-flagd-sync.md) on a port of its own: plaintext gRPC
// (h2c), one server stream per provider, each answered with its environment's flagd definition and
// again after every change of that environment. Changes come from the read model's watchers, which hear
// this instance's writes and, on PostgreSQL, the other instances' through the one LISTEN connection.
// gRPC (@grpc/grpc-js, @grpc/proto-loader) is loaded when the service starts listening, so that a
// deployment without FLAGPOST_FLAGD_SYNC_PORT never loads it (src/optional-packages.ts).

const PROTO = path.join(import.meta.dirname, 'flagd-sync.proto');
const SELECTOR_HEADER = 'flagd-selector';

export interface FlagdSyncServerOptions {
  service: FlagdSyncService;
  /** Told the id of every environment whose flags may have changed; `undefined`: all of them. */
  watch: (watcher: (environmentId: string | undefined) => void) => void;
  log: Logger;
  /** Open streams one client address (IPv6: its /64) may hold. */
  perClient: number;
  /** Milliseconds between two checks that the tokens of open streams are still valid (default 5000). */
  recheckMs?: number;
  /** Refused selectors one address may send per window before it is refused outright. */
  maxFailures?: number;
  failureWindowMs?: number;
  /**
   * Flag usage (docs/adr/0035-usage-counting.md): a definition delivered to a provider (a stream's first
   * one, each one after a change, FetchAllFlags) counts as one evaluation of every flag in it; what the
   * provider evaluates afterwards happens in flagd, out of Flagpost's sight: the metrics count these
   * evaluations with reason UNKNOWN.
   */
  usage?: Pick<FlagUsageTally, 'all'>;
  /** Bounds on the port's connections (issue 29); defaults as in config.ts. */
  connections?: Partial<SyncConnectionLimits>;
}

/**
 * The sync port takes unauthenticated HTTP/2 connections: without bounds, idle ones use up the process's
 * descriptors (420 did, and the main port answered ECONNRESET). Connections past `max` in all or
 * `perClient` per client key are closed as they arrive; a connection without a call for `idleMs` is
 * closed (GOAWAY), and one older than `maxAgeMs` is asked to go away, its streams ended (UNAVAILABLE,
 * so that providers reconnect) 5 s later.
 */
export interface SyncConnectionLimits {
  max: number;
  perClient: number;
  idleMs: number;
  maxAgeMs: number;
}

const DEFAULT_CONNECTION_LIMITS: SyncConnectionLimits = { max: 1000, perClient: 20, idleMs: 30_000, maxAgeMs: 3_600_000 };
/** How long an aged connection's streams may go on after its GOAWAY. */
const MAX_AGE_GRACE_MS = 5000;

interface RequestWithSelector {
  selector?: string;
}

interface StatusError {
  code: grpc.status;
  details: string;
}

const statusError = (status: keyof typeof grpc.status, details: string): StatusError & Error =>
  Object.assign(new Error(details), { code: loadGrpc().status[status], details });

export class FlagdSyncServer {
  /** Built by the first listen(). */
  private server: grpc.Server | undefined;
  private readonly environments: SyncEnvironments;
  /** Refused selectors per address: the same window counter as sign-in failures. */
  private readonly refusals: SyncRefusals;
  private readonly perClient = new Map<string, number>();
  private closing = false;
  /** The flag keys of the last definition counted per environment, so that a document is parsed once. */
  private readonly countedFlags = new Map<string, { document: string; flags: Array<{ slug: string }>; reasons: ReasonCounts }>();
  private closed: Promise<void> | undefined;
  private readonly limits: SyncConnectionLimits;
  /** The listening socket: connections are counted here, then handed to gRPC. */
  private listener: net.Server | undefined;
  private injector: grpc.ConnectionInjector | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly socketsPerClient = new Map<string, number>();
  /** Connections closed on arrival because of the caps (metrics and tests). */
  refusedConnections = 0;

  constructor(private readonly options: FlagdSyncServerOptions) {
    this.limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connections };
    this.environments = new SyncEnvironments(options.service, options.log, options.recheckMs ?? 5000);
    this.refusals = new SyncRefusals(options.maxFailures ?? 10, options.failureWindowMs ?? 60_000);
    options.watch((environmentId) => this.environments.changed(environmentId));
  }

  /** Open sync streams of this process (metrics). */
  get streamCount(): number {
    return this.environments.streamCount;
  }

  /** Connections open now on the sync port. */
  get connectionCount(): number {
    return this.sockets.size;
  }

  /**
   * Listens on host and port (0: any free port); answers the port bound. The port is a plain TCP
   * listener that counts connections and hands those within the caps to gRPC's connection injector.
   */
  listen(host: string, port: number): Promise<number> {
    const server = (this.server ??= this.build());
    this.environments.startRecheck();
    this.injector ??= server.createConnectionInjector(loadGrpc().ServerCredentials.createInsecure());
    const listener = (this.listener ??= net.createServer({ noDelay: true }, (socket) => this.accept(socket)));
    return new Promise((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, host, () => {
        listener.off('error', reject);
        resolve((listener.address() as net.AddressInfo).port);
      });
    });
  }

  private accept(socket: net.Socket): void {
    const client = clientKey(socket.remoteAddress ?? '');
    const ofClient = this.socketsPerClient.get(client) ?? 0;
    if (this.closing || this.sockets.size >= this.limits.max || ofClient >= this.limits.perClient) {
      this.refusedConnections += 1;
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    this.socketsPerClient.set(client, ofClient + 1);
    socket.once('close', () => {
      this.sockets.delete(socket);
      const left = (this.socketsPerClient.get(client) ?? 1) - 1;
      if (left <= 0) this.socketsPerClient.delete(client);
      else this.socketsPerClient.set(client, left);
    });
    // A socket that never completes the HTTP/2 preface is idle too.
    socket.setTimeout(this.limits.idleMs, () => {
      if (socket.bytesRead === 0) socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    this.injector!.injectConnection(socket);
  }

  private build(): grpc.Server {
    const runtime = loadGrpc();
    const definition = loadProtoLoader().loadSync(PROTO, { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true });
    const loaded = runtime.loadPackageDefinition(definition) as unknown as {
      flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
    };
    const server = new runtime.Server({
      // Idle providers are pinged, so that a half-open connection (a vanished host) ends its stream.
      'grpc.keepalive_time_ms': 60_000,
      'grpc.keepalive_timeout_ms': 20_000,
      // A connection without a call is closed; an old one is asked to go away (issue 29).
      'grpc.max_connection_idle_ms': this.limits.idleMs,
      'grpc.max_connection_age_ms': this.limits.maxAgeMs,
      'grpc.max_connection_age_grace_ms': MAX_AGE_GRACE_MS,
      // flagd providers ping every keepAliveTime ms when configured; allow it down to 10 s.
      'grpc.http2.min_ping_interval_without_data_ms': 10_000,
    });
    server.addService(loaded.flagd.sync.v1.FlagSyncService.service, {
      SyncFlags: (call: grpc.ServerWritableStream<RequestWithSelector, unknown>) => void this.syncFlags(call),
      FetchAllFlags: (call: grpc.ServerUnaryCall<RequestWithSelector, unknown>, callback: grpc.sendUnaryData<unknown>) =>
        void this.fetchAllFlags(call, callback),
      GetMetadata: (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => void this.getMetadata(call, callback),
    });
    return server;
  }

  /** Streams open now. */
  get size(): number {
    return this.environments.streamCount;
  }

  /**
   * Ends every stream with UNAVAILABLE, so that providers reconnect (to another instance, or to this one
   * after its restart), then stops the server. A clean end would tell a provider the sync is over.
   */
  close(): Promise<void> {
    // Called by the drain on SIGTERM (before HTTP requests drain) and again by services.stop().
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    this.listener?.close();
    const server = this.server;
    if (!server) {
      this.environments.closeAll(new Error(message('flagdSyncShuttingDown'))); // never listened: no stream to end
      return;
    }
    this.environments.closeAll(statusError('UNAVAILABLE', message('flagdSyncShuttingDown')));
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 2000);
      force.unref();
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
    for (const socket of this.sockets) socket.destroy();
  }

  private async syncFlags(call: grpc.ServerWritableStream<RequestWithSelector, unknown>): Promise<void> {
    const client = clientOf(call.getPeer());
    let grant: SyncGrant;
    try {
      grant = await this.admit(client, call.metadata, call.request);
    } catch (error) {
      call.emit('error', error);
      return;
    }
    if (call.cancelled) return;
    if ((this.perClient.get(client) ?? 0) >= this.options.perClient) {
      call.emit('error', statusError('RESOURCE_EXHAUSTED', message('flagdSyncTooManyStreams')));
      return;
    }
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left <= 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    };
    call.on('cancelled', release);
    call.on('close', release);
    call.on('finish', release);
    call.on('error', release);
    const opened = await this.environments.open(
      grant,
      (document) => {
        this.countDelivery(grant.environmentId, document);
        call.write({ flagConfiguration: document });
      },
      (error) => call.emit('error', error),
    );
    if (!opened) {
      release();
      call.emit('error', statusError('UNAVAILABLE', message('flagdSyncUnavailable')));
      return;
    }
    const closeStream = () => {
      opened.remove();
      release();
    };
    call.on('cancelled', closeStream);
    call.on('close', closeStream);
    if (call.cancelled || this.closing) closeStream();
  }

  private async fetchAllFlags(call: grpc.ServerUnaryCall<RequestWithSelector, unknown>, callback: grpc.sendUnaryData<unknown>): Promise<void> {
    try {
      const grant = await this.admit(clientOf(call.getPeer()), call.metadata, call.request);
      const document = await this.environments.current(grant);
      if (document === undefined) throw statusError('UNAVAILABLE', message('flagdSyncUnavailable'));
      this.countDelivery(grant.environmentId, document);
      callback(null, { flagConfiguration: document });
    } catch (error) {
      callback(error as StatusError & Error);
    }
  }

  private countDelivery(environmentId: string, document: string): void {
    if (!this.options.usage) return;
    let known = this.countedFlags.get(environmentId);
    if (known?.document !== document) {
      const parsed = JSON.parse(document) as { flags?: Record<string, unknown> };
      const flags = Object.keys(parsed.flags ?? {}).map((slug) => ({ slug }));
      known = { document, flags, reasons: reasonCounts(flags.map(() => 'UNKNOWN' as const)) };
      this.countedFlags.set(environmentId, known);
    }
    this.options.usage.all('flagd_sync', environmentId, known.flags, known.reasons);
  }

  /** Deprecated upstream (sync_context replaces it); answers which environment the selector names. */
  private async getMetadata(call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>): Promise<void> {
    try {
      const grant = await this.admit(clientOf(call.getPeer()), call.metadata, {});
      const text = (value: string) => ({ stringValue: value });
      callback(null, { metadata: { fields: { flagpostProject: text(grant.projectKey), flagpostEnvironment: text(grant.environmentKey) } } });
    } catch (error) {
      callback(error as StatusError & Error);
    }
  }

  /** The environment the caller's selector names; refusals are counted per address and throttled. */
  private async admit(client: string, metadata: grpc.Metadata, request: RequestWithSelector): Promise<SyncGrant> {
    if (this.closing) throw statusError('UNAVAILABLE', message('flagdSyncShuttingDown'));
    const wait = this.refusals.retryAfter(client);
    if (wait > 0) throw statusError('RESOURCE_EXHAUSTED', message('flagdSyncThrottled', { seconds: wait }));
    const header = metadata.get(SELECTOR_HEADER)[0];
    const selector = typeof header === 'string' && header !== '' ? header : (request.selector ?? '');
    let grant: SyncGrant | undefined;
    try {
      grant = await this.environments.grantOf(selector);
    } catch (error) {
      this.options.log.warn({ err: error }, 'flagd sync: a selector could not be checked');
      throw statusError('UNAVAILABLE', message('flagdSyncUnavailable'));
    }
    if (!grant) {
      this.refusals.failed(client);
      throw statusError('UNAUTHENTICATED', message('flagdSyncRefused'));
    }
    return grant;
  }
}

/** The counting key of a gRPC peer (`address:port`, IPv6 unbracketed): per address, IPv6 per /64. */
export function clientOf(peer: string): string {
  const colon = peer.lastIndexOf(':');
  const address = (colon > 0 ? peer.slice(0, colon) : peer).replace(/^\[|\]$/g, '');
  return clientKey(address);
}
