import { createHmac } from 'node:crypto';

// What every queue of deliveries shares (docs/architecture.md, "Delivery"): the status of a delivery, the
// record of each attempt, what a sender answers, the backoff between attempts, and the webhook signature.

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryAttempt {
  attempt: number;
  startedAt: string;
  durationMs: number;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** The outcome of one attempt as the sender saw it. */
export interface SendResult {
  ok: boolean;
  statusCode?: number;
  error?: string;
}

const MAX_DELAY_MS = 6 * 60 * 60 * 1000;

/** Exponential backoff: `baseMs` after the first failed attempt, doubling after each further one, capped at 6 h. */
export function retryDelayMs(baseMs: number, attemptsMade: number): number {
  return Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, attemptsMade - 1));
}

/**
 * Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with
 * the base64-decoded part of a `whsec_` secret. `timestamp` is in whole seconds.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
