import type { Actor, AuditLog } from '../audit/index.ts';
import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, type FieldProblem, message } from '../errors.ts';
import { type AutoResponseSettings, type Form, type FormService, mailSettingsProblems, type NotificationSettings } from '../forms/index.ts';
import type { AttemptResult, DeliveryAttempt } from '../delivery/index.ts';
import { fieldsMeet } from './field-conditions.ts';
import type { Delivery, DeliveryInput } from './outbox.ts';
import type { OutboxService } from './outbox.service.ts';
import type { Submission } from './submission.ts';
import type { SubmissionIntakeService } from './submission-intake.service.ts';
import { autoResponseMail, type MailPayload, notificationMail } from './submission-mail.ts';

/** Sends a delivery at once, outside the queue, and wakes the queue (the outbox worker). */
export interface DeliveryPort {
  tryNow(formId: string, item: DeliveryInput): Promise<AttemptResult>;
  wake(): void;
}

export interface SubmissionDeliveryServiceDeps {
  db: Db;
  forms: FormService;
  outbox: OutboxService;
  intake: Pick<SubmissionIntakeService, 'deliveriesFor'>;
  /** The outbox worker. */
  deliver: DeliveryPort;
  mailEnabled: boolean;
  /** The dashboard's address: the notification links to the submission there. */
  publicUrl: string;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

export interface TestDeliveryResult {
  kind: DeliveryInput['kind'];
  target: string;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** The fields of a test delivery when the caller gives none. */
export const TEST_FIELDS: Record<string, unknown> = { name: 'Flagpost test', message: 'This is a test delivery from Flagpost.' };

/** The fields of a mail preview when the caller gives none: an address, so that the auto-response shows too. */
export const PREVIEW_FIELDS: Record<string, unknown> = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  message: 'Hello! I would like to know more about your service.',
};

/** The e-mail settings a preview renders with; absent ones are the form's saved settings, null: none. */
export interface MailPreviewInput {
  data?: Record<string, unknown>;
  notifications?: NotificationSettings | null;
  autoResponse?: AutoResponseSettings | null;
}

/** An e-mail as rendered for a preview: both parts always. */
export type RenderedMail = MailPayload & { html: string };

/**
 * The two e-mails of a submission as the outbox would store them: the notification with the addresses it
 * would go to for these fields (`notifyEmails` and the routes whose conditions hold), the auto-response
 * null when none would go.
 */
export interface MailPreview {
  notification: RenderedMail & { to: string[] };
  autoResponse: (RenderedMail & { to: string }) | null;
}

/** A form's deliveries acted on (issue 34): a test of every delivery, re-sending one or all failed ones. */
export class SubmissionDeliveryService {
  constructor(private readonly deps: SubmissionDeliveryServiceDeps) {}

  /**
   * Sends what a submission with these fields would get (webhooks, chat messages, notifications, and the
   * auto-response when the fields hold an address), at once and stored nowhere; answers each outcome.
   */
  async testDelivery(formKey: string, data: Record<string, unknown> | undefined): Promise<TestDeliveryResult[]> {
    const form = await this.deps.forms.get(formKey);
    const submission: Submission = {
      id: `test_${newId()}`,
      formId: form.id,
      data: data ?? TEST_FIELDS,
      files: [],
      spam: false,
      spamReasons: [],
      meta: { ip: null, userAgent: null, referer: null, origin: null },
      createdAt: nowIso(this.deps.clock),
    };
    const items = this.deps.intake.deliveriesFor(form, submission);
    const response = this.deps.mailEnabled ? autoResponseMail(form, submission) : undefined;
    if (response) items.push({ kind: 'autoresponse', target: response.to, payload: JSON.stringify(response.mail) });
    return Promise.all(
      items.map(async (item) => {
        const result = await this.deps.deliver.tryNow(form.id, item);
        return { kind: item.kind, target: item.target, ok: result.ok, statusCode: result.statusCode ?? null, error: result.ok ? null : (result.error ?? null) };
      }),
    );
  }

  /**
   * Renders the notification and the auto-response a submission with these fields would get, with the real
   * templates and mail code, the unsaved settings of `input` in place of the saved ones; sends nothing.
   */
  async mailPreview(formKey: string, input: MailPreviewInput): Promise<MailPreview> {
    const form = await this.deps.forms.get(formKey);
    const settings = {
      notifications: input.notifications === undefined ? form.notifications : input.notifications,
      autoResponse: input.autoResponse === undefined ? form.autoResponse : input.autoResponse,
      webhooks: [],
    };
    const problems: FieldProblem[] = [];
    mailSettingsProblems(settings, (field, reason) => problems.push({ field: `body.${field}`, reason }));
    if (problems.length > 0) throw AppError.validation(problems);
    const submission: Submission = {
      id: `preview_${newId()}`,
      formId: form.id,
      data: input.data ?? PREVIEW_FIELDS,
      files: [],
      spam: false,
      spamReasons: [],
      meta: { ip: null, userAgent: null, referer: null, origin: null },
      createdAt: nowIso(this.deps.clock),
    };
    const link = `${this.deps.publicUrl}/forms/${form.key}/submissions/${submission.id}`;
    const mail = notificationMail({ ...form, notifications: settings.notifications }, submission, link);
    const { cc, bcc, routes } = settings.notifications ?? {};
    const to = new Set(form.notifyEmails);
    for (const route of routes ?? []) if (fieldsMeet(route.conditions, submission.data)) for (const address of route.emails) to.add(address);
    const notification = { ...mail, html: mail.html ?? '', to: [...to], ...(cc?.length ? { cc } : {}), ...(bcc?.length ? { bcc } : {}) };
    const response = autoResponseMail({ autoResponse: settings.autoResponse }, submission);
    return { notification, autoResponse: response ? { ...response.mail, html: response.mail.html ?? '', to: response.to } : null };
  }

  /** Queues one delivery of the form again (delivered or failed); answers it as it is now. */
  async resend(formKey: string, deliveryId: string, actor: Actor): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] }> {
    const form = await this.deps.forms.get(formKey);
    const found = await this.deps.outbox.findOfForm(form.id, deliveryId);
    if (!found) throw new AppError('not_found', message('formDeliveryNotFound', { id: deliveryId, formKey }));
    if (!(await this.deps.outbox.resend(form.id, deliveryId, nowIso(this.deps.clock)))) {
      throw new AppError('conflict', message('formDeliveryPending', { id: deliveryId }));
    }
    await this.record(form, actor, 'form.delivery_resent', { delivery: { after: deliveryId } });
    this.deps.deliver.wake();
    return (await this.deps.outbox.findOfForm(form.id, deliveryId))!;
  }

  /** Queues every failed delivery of the form again; answers how many. */
  async resendFailed(formKey: string, actor: Actor): Promise<number> {
    const form = await this.deps.forms.get(formKey);
    const count = await this.deps.outbox.resendFailed(form.id, nowIso(this.deps.clock));
    if (count > 0) {
      await this.record(form, actor, 'form.deliveries_resent', { deliveries: { after: count } });
      this.deps.deliver.wake();
    }
    return count;
  }

  private async record(form: Form, actor: Actor, action: string, changes: Record<string, { before?: unknown; after?: unknown }>): Promise<void> {
    await this.deps.audit.record(this.deps.db, actor, { projectId: form.projectId, entity: 'form', entityId: form.key, action, changes });
  }
}
