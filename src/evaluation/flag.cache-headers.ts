import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, messages } from '../errors.ts';
import { chooseEncoding, compressible, representationOf } from './compression.ts';
import { type CachedAnswer, flagNotFoundAnswer } from './flag.read-model.ts';

/** The exact Cache-Control string of the specification for GET flag endpoints (contract D6). */
export const FLAG_CACHE_CONTROL = 'public, s-maxage=60, max-age=30, stale-while-revalidate=60, stale-if-error=300';
/** The keys are request headers, so a shared cache must key on them (contract D6). */
export const FLAG_VARY = 'x-project-key, x-environment-key';
/** An answer large enough to be sent compressed also varies with Accept-Encoding (issue 10). */
export const FLAG_VARY_ENCODED = `${FLAG_VARY}, accept-encoding`;

export interface KeyHeaders {
  projectKey: string;
  environmentKey: string;
}

/** Reads x-project-key and x-environment-key; missing or empty is the D4 400. */
export function readKeyHeaders(request: FastifyRequest): KeyHeaders {
  const projectKey = request.headers['x-project-key'];
  const environmentKey = request.headers['x-environment-key'];
  if (typeof projectKey !== 'string' || projectKey === '' || typeof environmentKey !== 'string' || environmentKey === '') {
    throw new AppError('validation', messages.missingKeyHeaders);
  }
  return { projectKey, environmentKey };
}

/**
 * True when an If-None-Match header matches the ETag (weak comparison, as RFC 9110 asks). The ETag of
 * any encoding of the same answer matches too: a client that got the gzip representation and now
 * accepts brotli holds the same content.
 */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const identity = etag.replace(/\.(?:br|gz)"$/, '"');
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate
      .trim()
      .replace(/^W\//, '')
      .replace(/\.(?:br|gz)"$/, '"');
    if (tag === identity) return true;
  }
  return false;
}

/**
 * Sends a cached flag answer with the caching headers of D6. A matching If-None-Match gets 304 for a
 * 200 answer; error answers ignore preconditions (RFC 9110 section 13.2.1).
 */
export function sendFlagAnswer(request: FastifyRequest, reply: FastifyReply, answer: CachedAnswer): FastifyReply {
  const variable = compressible(answer);
  const representation = representationOf(answer, variable ? chooseEncoding(request.headers['accept-encoding']) : undefined);
  reply
    .header('cache-control', FLAG_CACHE_CONTROL)
    .header('vary', variable ? FLAG_VARY_ENCODED : FLAG_VARY)
    .header('etag', representation.etag);
  if (answer.status === 200 && etagMatches(request.headers['if-none-match'], answer.etag)) {
    return reply.code(304).send();
  }
  if (representation.encoding) reply.header('content-encoding', representation.encoding);
  return reply.code(answer.status).type('application/json; charset=utf-8').send(representation.bytes);
}

const FLAG_READ = /^\/v1\/flags\/([^?]*)/;

/**
 * The flag interface's answer to a flag read whose path Fastify cannot route (a slug that does not
 * decode, or one over the parameter length): it names no flag, so it gets the normal flag 404 and
 * clients treat the flag as off (contract D5).
 */
export function answerUnroutableFlagRead(request: FastifyRequest, reply: FastifyReply, path: string): FastifyReply | undefined {
  const read = FLAG_READ.exec(path);
  if (!read || (request.raw.method !== 'GET' && request.raw.method !== 'HEAD')) return undefined;
  return sendFlagAnswer(request, reply, flagNotFoundAnswer(read[1]!.slice(0, 150)));
}
