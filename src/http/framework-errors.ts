import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { messages } from '../errors.ts';

// Errors that Fastify and Node raise before any route runs (a path that does not decode, a parameter
// over maxParamLength, malformed HTTP, oversized headers). Their built-in answers are not the
// specification's error object (contract D8), so both are replaced here.

/**
 * A capability's own answer to a request refused before routing, for paths whose interface fixes
 * another answer than the generic 400; undefined leaves the request to the generic answer.
 */
export type EarlyAnswer = (request: FastifyRequest, reply: FastifyReply, path: string) => FastifyReply | undefined;

/** Fastify's `frameworkErrors` (an undecodable path or an overlong parameter), trying `answers` first. */
export function frameworkErrors(answers: readonly EarlyAnswer[] = []) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    request.log.info({ code: error.code }, 'request refused before routing');
    const path = request.raw.url ?? '';
    reply.header('x-request-id', request.id);
    if (path.startsWith('/v1/')) reply.header('access-control-allow-origin', '*');
    for (const answer of answers) {
      const sent = answer(request, reply, path);
      if (sent) return sent;
    }
    return reply.code(400).header('cache-control', 'no-store').send({ error: true, message: messages.generic });
  };
}

/** Node's `clientError` (malformed HTTP, headers too large, request timeout), answered as JSON. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let text: string = messages.generic;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    text = messages.headersTooLarge;
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    text = messages.requestTimeout;
  }
  const body = JSON.stringify({ error: true, message: text });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
