import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** The error a body that did not arrive in time ends with; answered 408 (error-handler.ts). */
export const BODY_TIMEOUT_CODE = 'FLAGPOST_BODY_TIMEOUT';

/**
 * onRequest hook: the body of a request must have arrived `ms` after its headers. Node's own
 * requestTimeout stops counting once the headers are in, so a body that drips a byte at a time would
 * hold its connection (and an upload slot) forever (issue 8). On time-out the body reader fails with a
 * 408 error; a request nobody is reading loses its connection.
 */
export function bodyDeadline(ms: number) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const raw = request.raw;
    if (raw.complete) {
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
