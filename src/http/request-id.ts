import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The x-request-id a client may choose; otherwise a generated one. */
const REQUEST_ID = /^[\w.-]{1,64}$/;

/** Generated request ids: a random prefix per process and a counter, cheaper than a UUID per request. */
const ID_PREFIX = randomUUID().slice(0, 13);
let idCounter = 0;
const newRequestId = (): string => `${ID_PREFIX}-${(++idCounter).toString(36)}`;

/** Fastify's genReqId: the client's x-request-id when it is short and plain, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  return chooseRequestId(req.headers['x-request-id']);
}

/** The same rule for code that reads the header itself (the flag read fast path). */
export function chooseRequestId(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : newRequestId();
}
