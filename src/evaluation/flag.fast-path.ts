import { recordOfrepExposure } from './exposure-port.ts';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { RateLimiter, RateLimitState } from '../http/rate-limit.ts';
import { chooseRequestId } from '../http/request-id.ts';
import { clientAddress, type TrustProxy } from '../http/trust-proxy.ts';
import { chooseEncoding, compressible, representationOf } from './compression.ts';
import { etagMatches, FLAG_CACHE_CONTROL, FLAG_VARY, FLAG_VARY_ENCODED } from './flag.cache-headers.ts';
import type { CachedAnswer, EnvironmentSnapshot, FlagReadModel } from './flag.read-model.ts';
import { countOfrepRead, type EvaluationContext, evaluateOfrepBulk, evaluateOfrepFlag, ofrepKnows, parseOfrepRequest } from './ofrep.evaluation.ts';
import type { OfrepStreams, StreamTokens } from './ofrep.streams.ts';

// The flag read fast path: a deliberate bypass of Fastify (style.md "Layers"; docs/performance.md).
// Flag GETs are most of the traffic and their answers are already bytes in the read model, so the
// cost of a read is the HTTP framework around it. This node:http handler runs before Fastify and
// answers only what it can answer exactly as the routes do (the reference): a GET of /v1/flags,
// /v1/flags/preview or /v1/flags/<slug> (src/evaluation/flag.routes.ts), and an OFREP evaluation, POST
// /ofrep/v1/evaluate/flags[/<key>] (src/evaluation/ofrep.routes.ts, through the same parser and evaluator,
// ofrep.evaluation.ts), with both key headers, a warm snapshot of known keys, an existing flag and a
// client within its rate limit (contract D20); with the same status, body, Cache-Control, Vary, ETag
// and 304 (D6), CORS headers (D7), RateLimit-* headers and x-request-id. It also opens OFREP event
// streams (GET /ofrep/v1/events?stream=<token> with a valid token of a warm snapshot, for a client within
// its stream cap and rate limit) as the route does: a stream held open for hours then holds no Fastify
// request, reply and child logger, about 2 kB of each of thousands of streams (docs/performance.md).
// Everything else (missing headers, unknown keys or flags, a cold snapshot, a client over its limit,
// HEAD, OPTIONS, encoded paths or queries, large or chunked OFREP bodies) goes to Fastify untouched.
// What it gives up: Fastify's per-request log lines and hooks. test/evaluation/read-model-fast-path.test.ts checks it against the routes
// byte for byte; FLAGPOST_FLAG_FAST_PATH=false turns it off.

/** GET routes under /v1/flags that the fast path stands in for; any other one there disables it. */
const SHADOWED_ROUTES = new Set(['/v1/flags', '/v1/flags/', '/v1/flags/preview', '/v1/flags/:slug']);
/**
 * Paths answered here: no percent-encoding or `;` to decode, so the slug is what the router would see.
 * Only the list may end in a slash (/v1/flags/), exactly as the routes: /v1/flags/<slug>/ is no route.
 */
const FLAG_PATH = /^\/v1\/flags(?:\/|\/([\w.~-]{1,256}))?$/;
/**
 * OFREP evaluations: POST /ofrep/v1/evaluate/flags and /ofrep/v1/evaluate/flags/<key>. Their small body
 * is read here; a body announced larger than this, or without a length, goes to Fastify unread.
 */
const OFREP_PATH = /^\/ofrep\/v1\/evaluate\/flags(?:\/([\w.~:-]{1,300}))?$/;
const OFREP_MAX_BODY = 16 * 1024;
/** An event stream's URL as the bulk answer gives it (StreamTokens.uriOf): nothing to decode in the token. */
const STREAM_URL = /^\/ofrep\/v1\/events\?stream=([\w.-]{1,1000})$/;
/** Sent by @fastify/cors for `origin: '*'` with `exposedHeaders: ['ETag']` on a non-preflight request (D7). */
const CORS_HEADERS = ['access-control-allow-origin', '*', 'access-control-expose-headers', 'ETag'];

/** The request headers the fast path reads. */
interface FlagReadHeaders {
  projectKey?: string;
  environmentKey?: string;
  ifNoneMatch?: string;
  acceptEncoding?: string;
  requestId?: string;
  lastEventId?: string;
  contentLength?: string;
  transferEncoding?: string;
}

/**
 * Reads the few headers the fast path needs straight from `rawHeaders`: building `req.headers` costs
 * more than the rest of a cached answer. Undefined when one of them repeats, since Node would join the
 * values: such a request is left to Fastify, which sees exactly what Node makes of it.
 */
function readFlagHeaders(raw: string[]): FlagReadHeaders | undefined {
  const found: FlagReadHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    let field: keyof FlagReadHeaders | undefined;
    if (name.length === 13) {
      const lower = name.toLowerCase();
      field = lower === 'x-project-key' ? 'projectKey' : lower === 'if-none-match' ? 'ifNoneMatch' : lower === 'last-event-id' ? 'lastEventId' : undefined;
    } else if (name.length === 17) {
      const lower = name.toLowerCase();
      field = lower === 'x-environment-key' ? 'environmentKey' : lower === 'transfer-encoding' ? 'transferEncoding' : undefined;
    } else if (name.length === 12) field = name.toLowerCase() === 'x-request-id' ? 'requestId' : undefined;
    else if (name.length === 15) field = name.toLowerCase() === 'accept-encoding' ? 'acceptEncoding' : undefined;
    else if (name.length === 14) field = name.toLowerCase() === 'content-length' ? 'contentLength' : undefined;
    if (field === undefined) continue;
    if (found[field] !== undefined) return undefined;
    found[field] = raw[i + 1]!;
  }
  return found;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The rate limit key of a connection, kept on its socket: reading the peer address is a system call. */
const SOCKET_KEY = Symbol('flagpost.rateLimitKey');
type KeyedSocket = IncomingMessage['socket'] & { [SOCKET_KEY]?: string };

/** How an answer is cached by clients: the flag interface's (D6), or OFREP's (no-store; ETag on bulk only). */
type AnswerKind = 'flag' | 'ofrep' | 'ofrep-bulk';

/** The rate limit counted for a request, when limits are on. */
interface Counted {
  limiter: RateLimiter;
  state: RateLimitState;
}

export class FlagFastPath {
  private active = false;
  private shadowsExactly = true;
  /** Told of every request the fast path answered, when metrics are on (src/http/http-metrics.ts); Fastify's hooks never see them. */
  observe: ((req: IncomingMessage, res: ServerResponse, startedMs: number) => void) | undefined = undefined;
  /** The headers every answer of a snapshot entry starts with, built once per representation (keyed by its bytes). */
  private readonly prefixes = new WeakMap<Buffer, string[]>();

  constructor(
    private readonly reads: FlagReadModel,
    /** The counter the Fastify routes use too; undefined when limits are off. */
    private readonly limiter: RateLimiter | undefined,
    /** The same trust function Fastify's request.ip uses; undefined when no proxy is trusted. */
    private readonly trustProxy: TrustProxy | undefined,
    /** The OFREP event streams and their URL tokens; undefined: streams are opened by the route only. */
    private readonly events?: { streams: OfrepStreams; tokens: StreamTokens },
  ) {}

  /**
   * Watches the routes as they are registered (call before any route) and turns the fast path on once
   * the app is ready, unless another GET route appeared under /v1/flags; off again when closing, so
   * that every request then reaches Fastify, which refuses new ones while it drains.
   */
  attach(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.includes('GET') && route.url.startsWith('/v1/flags') && !SHADOWED_ROUTES.has(route.url)) {
        this.shadowsExactly = false;
      }
    });
    app.addHook('onReady', async () => {
      this.active = this.shadowsExactly;
      if (!this.shadowsExactly) app.log.warn('a GET route under /v1/flags is unknown to the fast path; flag reads go through Fastify');
    });
    app.addHook('preClose', async () => {
      this.active = false;
    });
  }

  /** A node:http server that tries the fast path first and hands everything else to Fastify. */
  readonly serverFactory = (fastify: Handler, options: Record<string, unknown>): http.Server => {
    const server = http.createServer((options.http as http.ServerOptions) ?? {}, (req, res) => {
      const observe = this.observe;
      if (observe === undefined) {
        if (!this.answer(req, res, fastify)) fastify(req, res);
        return;
      }
      const started = performance.now();
      if (this.answer(req, res, fastify)) observe(req, res, started);
      else fastify(req, res);
    });
    // What Fastify sets on a server it creates itself (fastify/lib/server.js).
    server.keepAliveTimeout = options.keepAliveTimeout as number;
    server.requestTimeout = options.requestTimeout as number;
    server.setTimeout(options.connectionTimeout as number);
    if ((options.maxRequestsPerSocket as number) > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket as number;
    return server;
  };

  /** Answers the request and returns true, or returns false having touched nothing. */
  answer(req: IncomingMessage, res: ServerResponse, fastify: Handler): boolean {
    if (!this.active) return false;
    if (req.method === 'GET') return this.answerRead(req, res, fastify) || this.answerEvents(req, res, fastify);
    if (req.method === 'POST') return this.answerOfrep(req, res, fastify);
    return false;
  }

  /** GET /v1/flags, /v1/flags/preview or /v1/flags/<slug>: a ready answer of the snapshot. */
  private answerRead(req: IncomingMessage, res: ServerResponse, fastify: Handler): boolean {
    const url = req.url ?? '';
    if (!url.startsWith('/v1/flags')) return false;
    const query = url.indexOf('?');
    const match = FLAG_PATH.exec(query === -1 ? url : url.slice(0, query));
    if (!match) return false;
    const headers = readFlagHeaders(req.rawHeaders);
    const snapshot = headers && this.warmSnapshot(headers);
    if (!snapshot) return false;
    const slug = match[1];
    const single = slug === undefined || slug === 'preview' ? undefined : snapshot.v1.single.get(slug);
    const cached = slug === undefined ? snapshot.v1.list : slug === 'preview' ? snapshot.v1.preview : single;
    if (cached === undefined) return false;
    this.count(req, res, fastify, (counted) => {
      if (single !== undefined) this.reads.usage.one('v1_single', snapshot.environmentId, slug!, single.reason);
      else if (slug === undefined) this.reads.usage.all('v1_list', snapshot.environmentId, snapshot.flags, snapshot.v1.listReasons);
      else this.reads.usage.all('v1_list', snapshot.environmentId, snapshot.v1.previewFlags, snapshot.v1.previewReasons);
      this.send(res, headers, cached, 'flag', true, counted);
    });
    return true;
  }

  /**
   * GET /ofrep/v1/events?stream=<token>: an event stream of a warm snapshot, opened as the route opens it
   * (src/evaluation/ofrep.routes.ts); false having touched nothing for anything the route would refuse.
   */
  private answerEvents(req: IncomingMessage, res: ServerResponse, fastify: Handler): boolean {
    const events = this.events;
    const url = req.url ?? '';
    if (!events || !url.startsWith('/ofrep/v1/events?')) return false;
    const match = STREAM_URL.exec(url);
    const keys = match && events.tokens.parse(match[1]!);
    if (!keys) return false;
    const snapshot = this.warmSnapshot(keys);
    const headers = snapshot && readFlagHeaders(req.rawHeaders);
    if (!headers) return false;
    const client = this.trustProxy ? clientAddress(req, this.trustProxy) : (req.socket.remoteAddress ?? '');
    if (!events.streams.admits(client)) return false;
    this.count(req, res, fastify, () =>
      events.streams.open(res, { client, ...keys }, snapshot.environmentId, snapshot.version, headers.lastEventId, chooseRequestId(headers.requestId)),
    );
    return true;
  }

  /** An OFREP evaluation of a warm snapshot, or false having touched nothing (not even the body). */
  private answerOfrep(req: IncomingMessage, res: ServerResponse, fastify: Handler): boolean {
    const url = req.url ?? '';
    if (!url.startsWith('/ofrep/v1/evaluate/flags')) return false;
    const query = url.indexOf('?');
    const match = OFREP_PATH.exec(query === -1 ? url : url.slice(0, query));
    // A refetch asked for by an event stream may need a fresher snapshot (FlagReadModel.refreshIfStale).
    if (!match || (query !== -1 && url.includes('flagConfigEtag=', query))) return false;
    const headers = readFlagHeaders(req.rawHeaders);
    if (!headers || headers.transferEncoding !== undefined) return false;
    const length = headers.contentLength === undefined ? 0 : Number(headers.contentLength);
    if (!Number.isInteger(length) || length < 0 || length > OFREP_MAX_BODY) return false;
    const snapshot = this.warmSnapshot(headers);
    if (!snapshot) return false;
    const key = match[1];
    if (key !== undefined && !ofrepKnows(snapshot, key)) return false;

    this.count(req, res, fastify, (counted) => {
      const evaluate = (text: string) => {
        const request = parseOfrepRequest(text, key);
        if (request.problem) this.send(res, headers, request.problem, 'ofrep', false, counted);
        else this.sendEvaluation(res, headers, snapshot, key, request.context, counted);
      };
      // Nothing to read (OFREP providers may send no body).
      if (length === 0) return evaluate('');
      // The body is answered as soon as its declared length is in, in the same turn as the parser
      // delivers it, rather than on 'end' a tick later (a quarter of the throughput on small answers).
      const chunks: Buffer[] = [];
      let received = 0;
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received < length) return;
        req.off('data', onData);
        evaluate((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8'));
      };
      req.on('data', onData);
      req.on('error', () => res.destroy());
    });
    return true;
  }

  private sendEvaluation(
    res: ServerResponse,
    headers: FlagReadHeaders,
    snapshot: EnvironmentSnapshot,
    key: string | undefined,
    context: EvaluationContext,
    counted: Counted | undefined,
  ): void {
    let evaluated;
    if (key === undefined) evaluated = evaluateOfrepBulk(snapshot, context);
    else {
      evaluated = evaluateOfrepFlag(snapshot, key, context);
      // Server-side exposures of running experiments (issue 32): the port buffers, the answer is unchanged.
      recordOfrepExposure(this.reads.exposures, snapshot, key, context, evaluated);
    }
    countOfrepRead(this.reads.usage, snapshot, key, evaluated);
    const { answer, ready } = evaluated;
    this.send(res, headers, answer, key === undefined && answer.status === 200 ? 'ofrep-bulk' : 'ofrep', ready, counted);
  }

  /** The snapshot of the request's keys when it is in memory; undefined when unknown, cold or keys are missing. */
  private warmSnapshot(headers: Pick<FlagReadHeaders, 'projectKey' | 'environmentKey'>): EnvironmentSnapshot | undefined {
    const { projectKey, environmentKey } = headers;
    if (!projectKey || !environmentKey) return undefined;
    const snapshot = this.reads.get(projectKey, environmentKey);
    return snapshot instanceof Promise ? undefined : snapshot;
  }

  /**
   * Counts the request against the client's rate limit and then answers it; a client over its limit
   * gets Fastify's 429 (counted once more, which changes nothing for a client already over its budget).
   */
  private count(req: IncomingMessage, res: ServerResponse, fastify: Handler, respond: (counted: Counted | undefined) => void): void {
    const limiter = this.limiter;
    if (!limiter) return respond(undefined);
    limiter.hit(this.limitKey(req, limiter), (error, state) => {
      // As @fastify/rate-limit with skipOnError: a store failure answers as if nothing was counted.
      const current = error ? { current: 0, ttl: 0 } : state;
      if (current.current > limiter.max) fastify(req, res);
      else respond({ limiter, state: current });
    });
  }

  /**
   * Sends an answer with the headers its route sends: CORS; Cache-Control (and Vary) of the flag
   * interface or OFREP's no-store; the ETag and the 304 of a matching If-None-Match for flag reads
   * and OFREP bulk evaluations (only for a 200: error answers ignore preconditions, RFC 9110 13.2.1);
   * a compressed representation where the route offers one (ready answers only). `ready`: the answer
   * lives in a snapshot, so its leading headers and compressed forms are built once.
   */
  private send(res: ServerResponse, request: FlagReadHeaders, answer: CachedAnswer, kind: AnswerKind, ready: boolean, counted: Counted | undefined): void {
    const variable = kind !== 'ofrep' && ready && compressible(answer);
    const representation = representationOf(answer, variable ? chooseEncoding(request.acceptEncoding) : undefined);
    let headers: string[];
    if (ready) {
      let prefix = this.prefixes.get(representation.bytes);
      if (!prefix) this.prefixes.set(representation.bytes, (prefix = prefixOf(kind, variable, representation.etag)));
      headers = prefix.slice();
    } else headers = prefixOf(kind, variable, representation.etag);
    if (counted) counted.limiter.appendHeaders(headers, counted.state);
    headers.push('x-request-id', chooseRequestId(request.requestId));
    if (kind !== 'ofrep' && answer.status === 200 && etagMatches(request.ifNoneMatch, answer.etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    if (representation.encoding) headers.push('content-encoding', representation.encoding);
    headers.push('content-type', 'application/json; charset=utf-8', 'content-length', String(representation.bytes.length));
    res.writeHead(answer.status, headers);
    res.end(representation.bytes);
  }

  private limitKey(req: IncomingMessage, limiter: RateLimiter): string {
    if (this.trustProxy) return limiter.keyOf(clientAddress(req, this.trustProxy));
    const socket = req.socket as KeyedSocket;
    socket[SOCKET_KEY] ??= limiter.keyOf(socket.remoteAddress ?? '');
    return socket[SOCKET_KEY];
  }
}

/** The headers an answer starts with, before the rate limit and the request id. */
function prefixOf(kind: AnswerKind, variable: boolean, etag: string): string[] {
  if (kind === 'flag') return [...CORS_HEADERS, 'cache-control', FLAG_CACHE_CONTROL, 'vary', variable ? FLAG_VARY_ENCODED : FLAG_VARY, 'etag', etag];
  const headers = [...CORS_HEADERS, 'cache-control', 'no-store'];
  if (kind === 'ofrep-bulk') headers.push('etag', etag);
  if (variable) headers.push('vary', 'accept-encoding');
  return headers;
}
