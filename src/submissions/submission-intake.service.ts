import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, messages } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FileStorage, ReceivedFile } from '../files/index.ts';
import type { Form } from '../forms/index.ts';
import type { DeliveryInput, OutboxService } from '../outbox/index.ts';
import type { CaptchaVerifier } from './captcha.ts';
import { discordMessage, slackMessage } from './chat-messages.ts';
import { applyHoneypot, type IncomingSubmission, notificationEmail, type StoredFile, type Submission, webhookBody } from './submission.ts';
import type { SubmissionStore } from './submission.store.ts';
import { SubmissionWriter } from './submission-writer.ts';

export interface SubmissionIntakeServiceDeps {
  db: Db;
  store: SubmissionStore;
  outbox: OutboxService;
  /** Announces submission.stored once a submission is committed (the outbox worker then delivers at once). */
  events: DomainEvents;
  /** False when SMTP_URL is not set: no e-mail is queued. */
  mailEnabled: boolean;
  publicUrl: string;
  clock: () => Date;
  /** Verifies the CAPTCHA token of forms that ask for one (issue 12). */
  captcha: CaptchaVerifier;
  /** Where file bytes go (issue 19): the database, a folder or an S3 bucket. */
  files: FileStorage;
}

/** Takes submissions in: their files as they are read, the checks, the stored row and its deliveries. */
export class SubmissionIntakeService {
  private readonly writer: SubmissionWriter;

  constructor(private readonly deps: SubmissionIntakeServiceDeps) {
    this.writer = new SubmissionWriter(deps);
  }

  /**
   * Stores an accepted submission, its files, its metadata and its deliveries in one transaction (contract
   * D18). Spam (D17) is stored but queues no delivery. No field and no file is a 400 (D13); an empty
   * honeypot does not count as a field.
   */
  async accept(form: Form, incoming: IncomingSubmission): Promise<Submission> {
    try {
      return await this.store(form, incoming);
    } catch (error) {
      // Refused or not committed: the files already stored go (now, or by the sweep).
      await this.deps.files.discard(incoming.files.map((f) => f.received));
      throw error;
    }
  }

  /**
   * Stores one uploaded file as its body is read, where FLAGPOST_FILE_STORAGE says (a store that is
   * away is a 503 with Retry-After); it becomes part of a submission through `accept`.
   */
  receiveFile(id: string, source: AsyncIterable<Buffer>, contentType: string): Promise<ReceivedFile> {
    return this.deps.files.receive(id, source, contentType);
  }

  /** Gives up received files of a body that failed before `accept`. */
  discardFiles(files: readonly ReceivedFile[]): Promise<void> {
    return this.deps.files.discard(files);
  }

  /** Group commit's count of commits so far (see SubmissionWriter.commitCount). */
  get commitCount(): number {
    return this.writer.commitCount;
  }

  private async store(form: Form, incoming: IncomingSubmission): Promise<Submission> {
    if (form.captcha) {
      const refusal = await this.deps.captcha.check(form.captcha, incoming.data, incoming.meta.ip);
      if (refusal === 'missing') throw new AppError('validation', messages.formCaptchaMissing);
      if (refusal === 'failed') throw new AppError('forbidden', messages.formCaptchaFailed);
      if (refusal === 'unavailable') throw new AppError('unavailable', messages.formCaptchaUnavailable);
    }
    const { data, spam } = applyHoneypot(form, incoming.data);
    if (Object.keys(data).length === 0 && incoming.files.length === 0) throw new AppError('validation', messages.formEmpty);
    const files: StoredFile[] = incoming.files.map((f) => ({ id: f.id, field: f.field, name: f.name, size: f.received.size, contentType: f.contentType }));
    const submission: Submission = {
      id: newId(),
      formId: form.id,
      data,
      files,
      spam,
      meta: incoming.meta,
      createdAt: nowIso(this.deps.clock),
    };
    const deliveries = spam ? [] : this.deliveriesFor(form, submission);
    await this.writer.write({ submission, formKey: form.key, files: incoming.files, deliveries });
    return submission;
  }

  private deliveriesFor(form: Form, submission: Submission): DeliveryInput[] {
    const items: DeliveryInput[] = [];
    if (form.webhookUrl) items.push({ kind: 'webhook', target: form.webhookUrl, payload: webhookBody(form, submission) });
    // Chat messages link to the submission in the dashboard.
    const dashboardUrl = `${this.deps.publicUrl}/forms/${form.key}/submissions/${submission.id}`;
    if (form.slackWebhookUrl) items.push({ kind: 'slack', target: form.slackWebhookUrl, payload: slackMessage(form, submission, dashboardUrl) });
    if (form.discordWebhookUrl) items.push({ kind: 'discord', target: form.discordWebhookUrl, payload: discordMessage(form, submission, dashboardUrl) });
    if (this.deps.mailEnabled && form.notifyEmails.length > 0) {
      const adminUrl = `${this.deps.publicUrl}/admin/v1/forms/${form.key}/submissions/${submission.id}`;
      const payload = JSON.stringify(notificationEmail(form, submission, adminUrl));
      for (const to of form.notifyEmails) items.push({ kind: 'email', target: to, payload });
    }
    return items;
  }
}
