import type { DeliveryAttempt, DeliveryStatus } from '../delivery/index.ts';

/**
 * A signed webhook, an e-mail, or a chat message through a Slack or Discord incoming webhook (issue 12);
 * `autoresponse` is the e-mail to the submitter, `alert` the one to the owners when a delivery failed (issue 34).
 */
export type DeliveryKind = 'webhook' | 'email' | 'slack' | 'discord' | 'autoresponse' | 'alert';

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
