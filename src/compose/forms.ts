import { type OutboxSettings, MailSender, WebhookSender, WebhookTargetRule } from '../delivery/index.ts';
import type { EventService } from '../experiments/index.ts';
import type { FileStorage } from '../files/index.ts';
import { FormService, FormStore } from '../forms/index.ts';
import type { Identity } from '../identity/index.ts';
import {
  CaptchaVerifier,
  DeliveryAlerts,
  FormAnalyticsService,
  FormAnalyticsStore,
  OutboxService,
  OutboxStore,
  OutboxWorker,
  PersonalDataService,
  RetentionJob,
  SubmissionDeliveryService,
  SubmissionExportService,
  SubmissionIntakeService,
  SubmissionService,
  SubmissionStore,
} from '../submissions/index.ts';
import { WebhookService, WebhookStore, WebhookWorker } from '../webhooks/index.ts';
import type { Composition } from './context.ts';

/** Forms and their settings (the admin gate needs them before the submissions are composed). */
export function composeForms(c: Composition): FormService {
  const { config, db, events, audit, clock, projects } = c;
  return new FormService({ db, store: new FormStore(), audit, clock, events, projects, webhookTargets: new WebhookTargetRule(config.outbox.webhookTargets) });
}

/**
 * What leaves the process after a commit: the webhook sender every queue shares, with the outbox's
 * delivery settings (project webhooks share them, ADR 0040), and the mail sender of change requests and releases.
 */
export function composeDelivery(c: Composition) {
  const { config, clock, log, ports } = c;
  const webhookSender = new WebhookSender({ timeoutMs: config.outbox.webhookTimeoutMs, policy: config.outbox.webhookTargets, clock, lookup: ports.lookup });
  const outboxSettings: OutboxSettings = {
    log,
    pollMs: config.outbox.pollMs,
    retryBaseMs: config.outbox.retryBaseMs,
    maxAttempts: config.outbox.maxAttempts,
    leaseMs: config.outbox.webhookTimeoutMs + 60_000,
    clock,
  };
  const mail = config.smtpUrl ? new MailSender(config.smtpUrl, config.mailFrom) : undefined;
  return { webhookSender, outboxSettings, mail };
}

/**
 * The submission pipeline (intake, inbox, exports, deliveries and re-sends, access and erasure requests),
 * its outbox and the retention job, which also prunes what other rooms keep for a while (`alsoPrune`).
 */
export function composeSubmissions(
  c: Composition,
  deps: {
    forms: FormService;
    files: FileStorage;
    identity: Identity;
    trackedEvents: EventService;
    delivery: ReturnType<typeof composeDelivery>;
    alsoPrune: Array<() => Promise<number>>;
  },
) {
  const { config, db, handle, events, audit, clock, log } = c;
  const { forms, files } = deps;
  const mailEnabled = config.smtpUrl !== undefined;
  const outboxStore = new OutboxStore(handle.dialect);
  const store = new SubmissionStore();
  const submissionOutbox = new OutboxService(db, outboxStore);
  const submissionIntake = new SubmissionIntakeService({
    db,
    store,
    outbox: submissionOutbox,
    events,
    mailEnabled,
    publicUrl: config.publicUrl,
    clock,
    captcha: new CaptchaVerifier(config.captcha, log),
    files,
    writeFlushedOffLoop: handle.writeFlushedOffLoop,
  });
  const submissions = new SubmissionService({
    db,
    store,
    forms,
    outbox: submissionOutbox,
    events,
    listPageBytes: config.forms.listPageBytes,
    audit,
    files,
    intake: submissionIntake,
    clock,
  });
  // The owners hear of a delivery given up (issue 34), by e-mail when SMTP is set.
  if (mailEnabled)
    new DeliveryAlerts({ events, forms, accounts: deps.identity.accounts.members, outbox: submissionOutbox, publicUrl: config.publicUrl, clock });
  const submissionExports = new SubmissionExportService({ db, store, forms });
  const personalData = new PersonalDataService({ db, store, forms, audit, files, events: deps.trackedEvents });
  const outbox = new OutboxWorker({
    ...deps.delivery.outboxSettings,
    db,
    store: outboxStore,
    webhooks: deps.delivery.webhookSender,
    mail: config.smtpUrl ? new MailSender(config.smtpUrl, config.mailFrom) : undefined,
    forms,
    events,
  });
  const submissionDeliveries = new SubmissionDeliveryService({
    db,
    forms,
    outbox: submissionOutbox,
    intake: submissionIntake,
    deliver: outbox,
    mailEnabled,
    publicUrl: config.publicUrl,
    audit,
    clock,
  });
  const formAnalytics = new FormAnalyticsService({ db, store: new FormAnalyticsStore(), forms, clock });
  const retention = new RetentionJob({ db, dialect: handle.dialect, store, forms, files, clock, log, alsoPrune: deps.alsoPrune });
  return { submissions, submissionIntake, submissionExports, submissionDeliveries, formAnalytics, personalData, outbox, retention };
}

/** Project webhooks on flag changes (ADR 0040) and their queue, on the outbox's delivery settings. */
export function composeWebhooks(c: Composition, delivery: ReturnType<typeof composeDelivery>) {
  const { config, db, handle, events, audit, clock, projects } = c;
  const store = new WebhookStore(handle.dialect);
  const webhooks = new WebhookService({ db, store, projects, audit, events, clock, webhookTargets: new WebhookTargetRule(config.outbox.webhookTargets) });
  const webhookWorker = new WebhookWorker({ ...delivery.outboxSettings, db, store, sender: delivery.webhookSender, events });
  return { webhooks, webhookWorker };
}
