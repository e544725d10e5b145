import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { RateLimiter, RateLimitState } from '../../http/rate-limit.ts';
import { chooseRequestId } from '../../http/request-id.ts';
import { clientAddress, type TrustProxy } from '../../http/trust-proxy.ts';
import { chooseEncoding, compressible, representationOf } from './compression.ts';
import { etagMatches, FLAG_CACHE_CONTROL, FLAG_VARY, FLAG_VARY_ENCODED } from './flag.cache-headers.ts';
import type { CachedAnswer, FlagReadModel } from './flag.read-model.ts';
import { ofrepBodyProblem } from './ofrep.answers.ts';

// The flag read fast path: a deliberate bypass of Fastify (style.md "Layers"; docs/performance.md).
// Flag GETs are most of the traffic and their answers are already bytes in the read model, so the
// cost of a read is the HTTP framework around it. This node:http handler runs before Fastify and
// answers only what it can answer exactly as the routes in src/flags/flag.routes.ts do (the reference):
// a GET of /v1/flags, /v1/flags/preview or /v1/flags/<slug> with both key headers, a warm snapshot of
// known keys, an existing answer and a client within its rate limit (contract D20), with the same
// status, body, Cache-Control, Vary, ETag and 304 (D6), CORS headers (D7), RateLimit-* headers and
// x-request-id. Everything else (missing headers, unknown keys or slugs, a cold snapshot, a client over
// its limit, HEAD, OPTIONS, encoded paths) goes to Fastify untouched. What it gives up: Fastify's
// per-request log lines and hooks. test/read-model-fast-path.test.ts checks it against the routes
// byte for byte; FLAGPOST_FLAG_FAST_PATH=false turns it off.

/** GET routes under /v1/flags that the fast path stands in for; any other one there disables it. */
const SHADOWED_ROUTES = new Set(['/v1/flags', '/v1/flags/', '/v1/flags/preview', '/v1/flags/:slug']);
/**
 * Paths answered here: no percent-encoding or `;` to decode, so the slug is what the router would see.
 * Only the list may end in a slash (/v1/flags/), exactly as the routes: /v1/flags/<slug>/ is no route.
 */
const FLAG_PATH = /^\/v1\/flags(?:\/|\/([\w.~-]{1,256}))?$/;
/**
 * OFREP evaluations (issue 10): POST /ofrep/v1/evaluate/flags and /ofrep/v1/evaluate/flags/<key>, as
 * src/flags/ofrep.routes.ts answers them. Their small body is read here (ofrepBodyProblem checks it the
 * same way); a body announced larger than this, or without a length, goes to Fastify unread.
 */
const OFREP_PATH = /^\/ofrep\/v1\/evaluate\/flags(?:\/([\w.~:-]{1,300}))?$/;
const OFREP_MAX_BODY = 16 * 1024;
/** Sent by @fastify/cors for `origin: '*'` with `exposedHeaders: ['ETag']` on a non-preflight request (D7). */
const CORS_HEADERS = ['access-control-allow-origin', '*', 'access-control-expose-headers', 'ETag'];

/** The request headers the fast path reads. */
interface FlagReadHeaders {
  projectKey?: string;
  environmentKey?: string;
  ifNoneMatch?: string;
  acceptEncoding?: string;
  requestId?: string;
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
    if (name.length === 13) field = name.toLowerCase() === 'x-project-key' ? 'projectKey' : name.toLowerCase() === 'if-none-match' ? 'ifNoneMatch' : undefined;
    else if (name.length === 17) {
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

export class FlagFastPath {
  private active = false;
  private shadowsExactly = true;
  /** The headers every answer of a snapshot entry starts with, built once per representation (keyed by its bytes). */
  private readonly prefixes = new WeakMap<Buffer, string[]>();

  constructor(
    private readonly reads: FlagReadModel,
    /** The counter the Fastify routes use too; undefined when limits are off. */
    private readonly limiter: RateLimiter | undefined,
    /** The same trust function Fastify's request.ip uses; undefined when no proxy is trusted. */
    private readonly trustProxy: TrustProxy | undefined,
  ) {}

  /**
   * Watches the routes as they are registered (call before any route) and turns the fast path on once
   * the app is ready, unless another GET route appeared under /v1/flags; off again when closing, so
   * that Fastify answers 503 while it drains.
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
      if (!this.answer(req, res, fastify)) fastify(req, res);
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
    if (req.method === 'POST') return this.answerOfrep(req, res, fastify);
    if (req.method !== 'GET') return false;
    const url = req.url ?? '';
    if (!url.startsWith('/v1/flags')) return false;
    const query = url.indexOf('?');
    const match = FLAG_PATH.exec(query === -1 ? url : url.slice(0, query));
    if (!match) return false;
    const headers = readFlagHeaders(req.rawHeaders);
    if (!headers) return false;
    const { projectKey, environmentKey } = headers;
    if (!projectKey || !environmentKey) return false;
    const snapshot = this.reads.get(projectKey, environmentKey);
    if (snapshot === undefined || snapshot instanceof Promise) return false;
    const slug = match[1];
    const cached = slug === undefined ? snapshot.list : slug === 'preview' ? snapshot.preview : snapshot.single.get(slug);
    if (cached === undefined) return false;

    const limiter = this.limiter;
    if (!limiter) {
      this.send(headers, res, cached);
      return true;
    }
    limiter.hit(this.limitKey(req, limiter), (error, state) => {
      // As @fastify/rate-limit with skipOnError: a store failure answers as if nothing was counted.
      const counted = error ? { current: 0, ttl: 0 } : state;
      // Over the limit: Fastify answers the 429 (counting once more, which changes nothing for a client
      // already over its budget).
      if (counted.current > limiter.max) fastify(req, res);
      else this.send(headers, res, cached, limiter, counted);
    });
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
    const { projectKey, environmentKey } = headers;
    if (!projectKey || !environmentKey) return false;
    const snapshot = this.reads.get(projectKey, environmentKey);
    if (snapshot === undefined || snapshot instanceof Promise) return false;
    const key = match[1];
    const cached = key === undefined ? snapshot.ofrepBulk : snapshot.ofrep.get(key);
    if (cached === undefined) return false;

    const reply = (limiter?: RateLimiter, state?: RateLimitState) => {
      if (length === 0) {
        // Nothing to read or check (OFREP providers may send no body).
        this.sendOfrep(headers, res, cached, key === undefined, limiter, state);
        return;
      }
      // The body is answered as soon as its declared length is in, in the same turn as the parser
      // delivers it, rather than on 'end' a tick later (a quarter of the throughput on small answers).
      const chunks: Buffer[] = [];
      let received = 0;
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received < length) return;
        req.off('data', onData);
        const problem = ofrepBodyProblem((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8'), key);
        if (problem) this.sendOfrepProblem(headers, res, problem, limiter, state);
        else this.sendOfrep(headers, res, cached, key === undefined, limiter, state);
      };
      req.on('data', onData);
      req.on('error', () => res.destroy());
    };
    const limiter = this.limiter;
    if (!limiter) {
      reply();
      return true;
    }
    limiter.hit(this.limitKey(req, limiter), (error, state) => {
      const counted = error ? { current: 0, ttl: 0 } : state;
      if (counted.current > limiter.max) fastify(req, res);
      else reply(limiter, counted);
    });
    return true;
  }

  /** As ofrep.routes.ts: no-store; the bulk answer with its ETag, 304 and encodings; a single one as it is. */
  private sendOfrep(request: FlagReadHeaders, res: ServerResponse, cached: CachedAnswer, bulk: boolean, limiter?: RateLimiter, state?: RateLimitState): void {
    const headers = [...CORS_HEADERS, 'cache-control', 'no-store'];
    const variable = bulk && compressible(cached);
    const representation = representationOf(cached, variable ? chooseEncoding(request.acceptEncoding) : undefined);
    if (bulk) headers.push('etag', representation.etag);
    if (variable) headers.push('vary', 'accept-encoding');
    if (limiter && state) limiter.appendHeaders(headers, state);
    headers.push('x-request-id', chooseRequestId(request.requestId));
    if (bulk && etagMatches(request.ifNoneMatch, cached.etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    if (representation.encoding) headers.push('content-encoding', representation.encoding);
    headers.push('content-type', 'application/json; charset=utf-8', 'content-length', String(representation.bytes.length));
    res.writeHead(200, headers);
    res.end(representation.bytes);
  }

  private sendOfrepProblem(
    request: FlagReadHeaders,
    res: ServerResponse,
    problem: Record<string, unknown>,
    limiter?: RateLimiter,
    state?: RateLimitState,
  ): void {
    const body = Buffer.from(JSON.stringify(problem));
    const headers = [...CORS_HEADERS, 'cache-control', 'no-store'];
    if (limiter && state) limiter.appendHeaders(headers, state);
    headers.push('x-request-id', chooseRequestId(request.requestId), 'content-type', 'application/json; charset=utf-8', 'content-length', String(body.length));
    res.writeHead(400, headers);
    res.end(body);
  }

  private send(request: FlagReadHeaders, res: ServerResponse, cached: CachedAnswer, limiter?: RateLimiter, state?: RateLimitState): void {
    const variable = compressible(cached);
    const representation = representationOf(cached, variable ? chooseEncoding(request.acceptEncoding) : undefined);
    let prefix = this.prefixes.get(representation.bytes);
    if (!prefix) {
      prefix = [...CORS_HEADERS, 'cache-control', FLAG_CACHE_CONTROL, 'vary', variable ? FLAG_VARY_ENCODED : FLAG_VARY, 'etag', representation.etag];
      this.prefixes.set(representation.bytes, prefix);
    }
    const headers = prefix.slice();
    if (limiter && state) limiter.appendHeaders(headers, state);
    headers.push('x-request-id', chooseRequestId(request.requestId));
    if (cached.status === 200 && etagMatches(request.ifNoneMatch, cached.etag)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    if (representation.encoding) headers.push('content-encoding', representation.encoding);
    headers.push('content-type', 'application/json; charset=utf-8', 'content-length', String(representation.bytes.length));
    res.writeHead(cached.status, headers);
    res.end(representation.bytes);
  }

  private limitKey(req: IncomingMessage, limiter: RateLimiter): string {
    if (this.trustProxy) return limiter.keyOf(clientAddress(req, this.trustProxy));
    const socket = req.socket as KeyedSocket;
    socket[SOCKET_KEY] ??= limiter.keyOf(socket.remoteAddress ?? '');
    return socket[SOCKET_KEY];
  }
}
