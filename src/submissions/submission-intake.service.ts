import { newId, nowIso } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message, messages } from '../errors.ts';
import type { DomainEvents } from '../events/index.ts';
import type { FileStorage, ReceivedFile } from '../files/index.ts';
import { checkFields, type Form, type SpamChecks } from '../forms/index.ts';
import { disposableReason, fillTimeReason, fingerprintOf, RATE_WINDOW_SECONDS, ruleContext, ruleReason, DUPLICATE_WINDOW_MINUTES } from './spam-checks.ts';
import type { DeliveryInput } from './outbox.ts';
import type { OutboxService } from './outbox.service.ts';
import type { CaptchaVerifier } from './captcha.ts';
import { discordMessage, slackMessage } from './chat-messages.ts';
import { fieldsMeet } from './field-conditions.ts';
import { applyHoneypot, type IncomingSubmission, type SpamReason, type StoredFile, type Submission, webhookBody } from './submission.ts';
import { autoResponseMail, notificationMail } from './submission-mail.ts';
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
  /** SQLite: commits whose disk flush does not hold the event loop (SubmissionWriter). */
  writeFlushedOffLoop?: <T>(work: (db: Db) => Promise<T>) => Promise<T>;
}

/**
 * A form's rate-limit scope in this process: admitted submissions not yet committed (`n`), how many have
 * been committed since the entry was made (`committed`), and checks reading the counts (`readers`). The
 * entry goes when none is on its way and none reads.
 */
interface RateHold {
  key: string;
  n: number;
  committed: number;
  readers: number;
}

/** At most one auto-response per address and form in this time (it is an outbound-mail amplifier). */
export const AUTO_RESPONSE_INTERVAL_MS = 10 * 60 * 1000;

/** Takes submissions in: their files as they are read, the checks, the stored row and its deliveries. */
export class SubmissionIntakeService {
  private readonly writer: SubmissionWriter;
  /** When this process last queued an auto-response, by form and address. */
  private readonly recentAutoResponses = new Map<string, number>();
  /** The rate limit's submissions on their way in this process, by form and scope (`lookBack`). */
  private readonly onTheirWay = new Map<string, RateHold>();

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
    if (form.spamChecks?.proofOfWork) await this.checkProofOfWork(incoming);
    const { data, spam: trapped } = applyHoneypot(form, incoming.data);
    if (Object.keys(data).length === 0 && incoming.files.length === 0) throw new AppError('validation', messages.formEmpty);
    // The honeypot is no field of the form: a filled one is judged as spam, not by the rules.
    const fields = form.honeypot ? Object.fromEntries(Object.entries(data).filter(([name]) => name !== form.honeypot)) : data;
    if (form.fieldRules) {
      const fieldErrors = checkFields(
        form.fieldRules,
        fields,
        incoming.files.map((f) => f.field),
      );
      if (fieldErrors.length > 0) {
        const names = fieldErrors.map((e) => e.field.slice(0, 100)).join(', ');
        throw new AppError('unprocessable', message('formFieldsInvalid', { fields: names.slice(0, 500) }), { fieldErrors });
      }
    }
    const now = this.deps.clock();
    const fingerprint = fingerprintOf(fields);
    const { rate, duplicate } = await this.lookBack(form, incoming.meta.ip, fingerprint, now);
    try {
      const reasons: SpamReason[] = trapped ? [{ check: 'honeypot', detail: `the field "${form.honeypot!.slice(0, 100)}" was filled` }] : [];
      if (form.spamChecks) reasons.push(...this.spamReasons(form.spamChecks, { fields, duplicate, incoming, now }));
      const spam = reasons.length > 0;
      const files: StoredFile[] = incoming.files.map((f) => ({ id: f.id, field: f.field, name: f.name, size: f.received.size, contentType: f.contentType }));
      const submission: Submission = {
        id: newId(),
        formId: form.id,
        data,
        files,
        spam,
        spamReasons: reasons,
        fingerprint,
        meta: incoming.meta,
        createdAt: nowIso(this.deps.clock),
      };
      const deliveries = spam ? [] : [...this.deliveriesFor(form, submission), ...(await this.autoResponseFor(form, submission))];
      await this.writer.write({ submission, formKey: form.key, files: incoming.files, deliveries, rateCounts: rate?.counts });
      return submission;
    } finally {
      rate?.release();
    }
  }

  /**
   * What the checks that look back at earlier submissions need, read in one statement: the per-form rate
   * limit (docs/adr/0046-spam-checks.md; over it is a 429 and nothing is stored) and the duplicate check.
   * The rate limit counts the submissions stored in the last RATE_WINDOW_SECONDS (the counts of migration
   * 0034) and those of this process still on their way to the database, so that a burst of submissions at
   * once cannot all pass before the first is committed. Admitted, the submission is on its way until
   * `rate.release` (called once it is committed or refused); `rate.counts` go with it into its transaction.
   */
  private async lookBack(
    form: Form,
    ip: string | null,
    fingerprint: string,
    now: Date,
  ): Promise<{ rate?: { counts: { scopes: string[]; second: number }; release: () => void }; duplicate: boolean }> {
    const checks = form.spamChecks;
    const limit = checks?.rateLimit;
    const scopes: Array<{ scope: string; max: number }> = [];
    if (limit?.perAddress && ip !== null) scopes.push({ scope: ip, max: limit.perAddress });
    if (limit?.perMinute) scopes.push({ scope: '', max: limit.perMinute });
    const duplicateMinutes = checks?.duplicates?.enabled ? (checks.duplicates.windowMinutes ?? DUPLICATE_WINDOW_MINUTES) : undefined;
    if (scopes.length === 0 && duplicateMinutes === undefined) return { duplicate: false };
    const second = Math.floor(now.getTime() / 1000);
    // Each scope's entry stays in the map while this check reads (`readers`), so that what was committed
    // meanwhile is seen: it may be in the counts read or not, and counts (once more, at worst).
    const entries = scopes.map(({ scope }) => {
      const key = `${form.id} ${scope}`;
      let entry = this.onTheirWay.get(key);
      if (!entry) this.onTheirWay.set(key, (entry = { key, n: 0, committed: 0, readers: 0 }));
      entry.readers++;
      return { entry, committedBefore: entry.committed };
    });
    let found: { counts: number[]; duplicate: boolean };
    try {
      found = await this.deps.store.recentActivity(this.deps.db, form.id, {
        scopes: scopes.map(({ scope }) => scope),
        afterSecond: second - RATE_WINDOW_SECONDS,
        duplicateOf: duplicateMinutes === undefined ? undefined : { fingerprint, sinceIso: new Date(now.getTime() - duplicateMinutes * 60_000).toISOString() },
      });
    } finally {
      for (const { entry } of entries) entry.readers--;
    }
    // From here to the end of this function nothing waits: the check and the hold are one step.
    const over = scopes.some(({ max }, i) => {
      const { entry, committedBefore } = entries[i]!;
      return found.counts[i]! + entry.n + (entry.committed - committedBefore) >= max;
    });
    if (!over) for (const { entry } of entries) entry.n++;
    for (const { entry } of entries) this.forgetIdle(entry);
    if (over) throw new AppError('rate_limited', messages.formRateLimited, { retryAfterSeconds: RATE_WINDOW_SECONDS });
    if (entries.length === 0) return { duplicate: found.duplicate };
    let released = false;
    const rate = {
      counts: { scopes: scopes.map(({ scope }) => scope), second },
      release: () => {
        if (released) return;
        released = true;
        for (const { entry } of entries) {
          entry.n--;
          entry.committed++;
          this.forgetIdle(entry);
        }
      },
    };
    return { rate, duplicate: found.duplicate };
  }

  private forgetIdle(entry: RateHold): void {
    if (entry.n === 0 && entry.readers === 0) this.onTheirWay.delete(entry.key);
  }

  /** A form that asks for a proof of work refuses a submission without a fresh one (once per solution). */
  private async checkProofOfWork(incoming: IncomingSubmission): Promise<void> {
    const proof = incoming.proofOfWork ?? { ok: false, why: 'missing' };
    if (!proof.ok && proof.why === 'missing') throw new AppError('validation', messages.formProofOfWorkMissing);
    if (!proof.ok) throw new AppError('forbidden', messages.formProofOfWorkFailed);
    const now = this.deps.clock();
    const expires = new Date(Math.max(proof.expiresAt * 1000, now.getTime())).toISOString();
    if (!(await this.deps.store.useProofOfWork(this.deps.db, proof.signature, expires, now.toISOString())))
      throw new AppError('forbidden', messages.formProofOfWorkFailed);
  }

  /**
   * The verdicts of the form's spam checks (docs/adr/0046-spam-checks.md) once `lookBack` has read what
   * they need of earlier submissions: every check that says spam adds its reason.
   */
  private spamReasons(checks: SpamChecks, at: { fields: Record<string, unknown>; duplicate: boolean; incoming: IncomingSubmission; now: Date }): SpamReason[] {
    const reasons: SpamReason[] = [];
    if (checks.minFillSeconds) {
      const reason = fillTimeReason(checks.minFillSeconds, at.incoming.loadedAt, at.now.getTime());
      if (reason) reasons.push(reason);
    }
    if (checks.duplicates?.enabled && at.duplicate) {
      const minutes = checks.duplicates.windowMinutes ?? DUPLICATE_WINDOW_MINUTES;
      reasons.push({ check: 'duplicate', detail: `the same fields were submitted within ${minutes} minutes` });
    }
    if (checks.disposableEmails) {
      const reason = disposableReason(at.fields);
      if (reason) reasons.push(reason);
    }
    if (checks.rules && checks.rules.length > 0) {
      const reason = ruleReason(checks.rules, ruleContext(at.fields, at.incoming.meta));
      if (reason) reasons.push(reason);
    }
    return reasons;
  }

  /**
   * The deliveries of a submission that is not spam: the webhook, the further webhooks whose conditions
   * hold, the chat messages, and one notification per address (the form's, and those of the routes whose
   * conditions hold; CC and BCC ride on the first). Public for the test delivery.
   */
  deliveriesFor(form: Form, submission: Submission): DeliveryInput[] {
    const items: DeliveryInput[] = [];
    const body = webhookBody(form, submission);
    const hooks = new Set<string>();
    if (form.webhookUrl) hooks.add(form.webhookUrl);
    for (const hook of form.webhooks) if (fieldsMeet(hook.conditions, submission.data)) hooks.add(hook.url);
    for (const url of hooks) items.push({ kind: 'webhook', target: url, payload: body });
    // Chat messages and e-mails link to the submission in the dashboard.
    const dashboardUrl = `${this.deps.publicUrl}/forms/${form.key}/submissions/${submission.id}`;
    if (form.slackWebhookUrl) items.push({ kind: 'slack', target: form.slackWebhookUrl, payload: slackMessage(form, submission, dashboardUrl) });
    if (form.discordWebhookUrl) items.push({ kind: 'discord', target: form.discordWebhookUrl, payload: discordMessage(form, submission, dashboardUrl) });
    const recipients = new Set(form.notifyEmails);
    for (const route of form.notifications?.routes ?? []) if (fieldsMeet(route.conditions, submission.data)) for (const to of route.emails) recipients.add(to);
    if (this.deps.mailEnabled && recipients.size > 0) {
      const mail = notificationMail(form, submission, dashboardUrl);
      const { cc, bcc } = form.notifications ?? {};
      let first = true;
      for (const to of recipients) {
        items.push({
          kind: 'email',
          target: to,
          payload: JSON.stringify(first ? { ...mail, ...(cc?.length ? { cc } : {}), ...(bcc?.length ? { bcc } : {}) } : mail),
        });
        first = false;
      }
    }
    return items;
  }

  /** The auto-response, unless mail is off, there is no address, or one went to it within AUTO_RESPONSE_INTERVAL_MS. */
  private async autoResponseFor(form: Form, submission: Submission): Promise<DeliveryInput[]> {
    if (!this.deps.mailEnabled) return [];
    const response = autoResponseMail(form, submission);
    if (!response) return [];
    const to = response.to.toLowerCase();
    const now = this.deps.clock().getTime();
    // Two submissions from one address at once: the second waits for no commit, this process remembers.
    const key = `${form.id} ${to}`;
    const last = this.recentAutoResponses.get(key);
    if (last !== undefined && now - last < AUTO_RESPONSE_INTERVAL_MS) return [];
    if (await this.deps.outbox.queuedSince(form.id, 'autoresponse', to, new Date(now - AUTO_RESPONSE_INTERVAL_MS).toISOString())) return [];
    this.recentAutoResponses.set(key, now);
    if (this.recentAutoResponses.size > 10_000) {
      for (const [k, at] of this.recentAutoResponses) if (now - at >= AUTO_RESPONSE_INTERVAL_MS) this.recentAutoResponses.delete(k);
    }
    return [{ kind: 'autoresponse', target: to, payload: JSON.stringify(response.mail) }];
  }
}
