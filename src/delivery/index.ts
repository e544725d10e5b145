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
export { attemptsOf, claimDueRows, newQueueRow, pendingStatsOf, recordAttemptOf, recordMailOutcome } from './delivery-queue.store.ts';
export { type DeliveryAttempt, type DeliveryStatus, retryDelayMs, type SendResult, signWebhook } from './delivery.ts';
export { type MailMessage, MailSender } from './mail.sender.ts';
export { type Lookup, WebhookSender } from './webhook.sender.ts';
export { refusedTarget, type WebhookTargetPolicy, WebhookTargetRule } from './webhook-target.ts';
export { type JobPlacement, type PeriodicJob, type ScheduledJob, Scheduler, TimedJob, type TimedTask } from './scheduler.ts';
