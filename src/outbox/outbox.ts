import { createHmac } from 'node:crypto';

/**
 * A signed webhook, an e-mail, or a chat message through a Slack or Discord incoming webhook (issue 12);
 * `autoresponse` is the e-mail to the submitter, `alert` the one to the owners when a delivery failed (issue 34).
 */
export type DeliveryKind = 'webhook' | 'email' | 'slack' | 'discord' | 'autoresponse' | 'alert';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** What a submission asks to have delivered; written in the submission's transaction (contract D18). */
export interface DeliveryInput {
  kind: DeliveryKind;
  /** Webhook URL (also of Slack and Discord) or e-mail address. */
  target: string;
  /** The exact webhook body, or the e-mail as JSON (`{subject, text, html?, fromName?, replyTo?, cc?, bcc?}`). */
  payload: string;
}

export interface Delivery extends DeliveryInput {
  id: string;
  submissionId: string;
  formId: string | null;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

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

export const deliveryView = (d: Delivery, attempts: DeliveryAttempt[]) => ({
  id: d.id,
  kind: d.kind,
  target: d.target,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
  lastError: d.lastError,
  deliveredAt: d.deliveredAt,
  history: attempts,
});
