import { createHash } from 'node:crypto';

// The unit of every answer cache of the read side (/v1 in v1.answers.ts, OFREP in ofrep.answers.ts): a
// status and an exact body, encoded once, with its strong ETag.

/** A ready answer: status, exact body (as text and as the UTF-8 bytes sent) and strong ETag. */
export interface CachedAnswer {
  readonly status: number;
  readonly body: string;
  /** Encoded once, so that no read pays for turning a large list into bytes again. */
  readonly bytes: Buffer;
  readonly etag: string;
}

function etagOf(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url')}"`;
}

export function answer(status: number, value: unknown): CachedAnswer {
  return answerOfBody(status, JSON.stringify(value));
}

export function answerOfBody(status: number, body: string): CachedAnswer {
  return { status, body, bytes: Buffer.from(body), etag: etagOf(body) };
}
