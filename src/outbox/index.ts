export {
  type AttemptResult,
  allDeliveries,
  type DeliveryOutcome,
  type DeliveryQueue,
  DeliveryLoop,
  type DeliveryOutcomes,
  JobLoop,
  type OutboxSettings,
  outboxLoopOptions,
  type WorkerLog,
} from './delivery-loop.ts';
export { attemptsOf, claimDueRows, newQueueRow, pendingStatsOf, recordAttemptOf } from './delivery-queue.store.ts';
export { MailSender } from './mail.sender.ts';
export { type Delivery, type DeliveryAttempt, type DeliveryInput, deliveryView, retryDelayMs, signWebhook } from './outbox.ts';
export { OutboxService } from './outbox.service.ts';
export { OutboxStore } from './outbox.store.ts';
export { OutboxWorker } from './outbox.worker.ts';
export { type Lookup, WebhookSender } from './webhook.sender.ts';
export { refusedTarget, type WebhookTargetPolicy, WebhookTargetRule } from './webhook-target.ts';
