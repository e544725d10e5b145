import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** The error a body that did not arrive in time ends with; answered 408 (error-handler.ts). */
export const BODY_TIMEOUT_CODE = 'FLAGPOST_BODY_TIMEOUT';

/**
 * onRequest hook: the body of a request must have arrived `ms` after its headers. Node's own
 * requestTimeout stops counting once the headers are in, so a body that drips a byte at a time would
 * hold its connection (and an upload slot) forever (issue 8). On time-out the body reader fails with a
 * 408 error; a request nobody is reading loses its connection. A request without a body (neither
 * Content-Length nor Transfer-Encoding, RFC 9112 section 6.3) gets no timer: Node marks it complete only
 * once its body is read, which for a GET nobody reads (an event stream's, held open for hours) would
 * have kept the timer, and the request and reply it closes over, alive until it fired.
 */
export function bodyDeadline(ms: number) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const raw = request.raw;
    if (raw.complete || !hasBody(raw.headers)) {
      done();
      return;
    }
    const timer = setTimeout(() => {
      if (raw.complete || reply.sent) return;
      const error = Object.assign(new Error('the request body did not arrive in time'), { statusCode: 408, code: BODY_TIMEOUT_CODE });
      if (raw.listenerCount('error') > 0) raw.emit('error', error);
      else if (typeof raw.socket?.destroy === 'function') raw.socket.destroy();
      else raw.destroy();
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    raw.once('end', clear);
    raw.once('close', clear);
    done();
  };
}

/** Whether a request's headers announce a body (an HTTP/1.1 request without either header has none). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
