import type { Selectable } from 'kysely';
import { fromBool, fromJson, toBool, toJson } from '../db/codec.ts';
import type { Executor } from '../db/database.ts';
import type { AutoResponseSettings, NotificationSettings, WebhookRoute } from './form-mail.ts';
import type { FieldRules } from './field-rules.ts';
import type { AnalyticsSettings, CaptchaProvider, FilePolicy, Form, SpamChecks } from './form.ts';
import type { FormsTable } from './form.table.ts';

/** Parsed settings kept by their JSON text (the oldest goes past this many). */
const PARSED_SETTINGS = 256;
const parsedSettings = new Map<string, unknown>();

/**
 * A form's object settings (rules, checks, templates) parsed once per distinct text and frozen: every
 * submission reads its form, and parsing the same rules again was a tenth of a checked intake's work
 * (issue 34). The same object for the same text also lets the compiled field rules and spam rules be found
 * by identity.
 */
function settingsOf<T>(text: string | null): T | null {
  if (text === null) return null;
  let parsed = parsedSettings.get(text);
  if (parsed === undefined) {
    parsed = deepFreeze(JSON.parse(text));
    // The oldest parsed goes first: a lookup leaves the order alone (hashing a long text once, not thrice).
    if (parsedSettings.size >= PARSED_SETTINGS) parsedSettings.delete(parsedSettings.keys().next().value!);
    parsedSettings.set(text, parsed);
  }
  return parsed as T;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const toForm = (row: Selectable<FormsTable> & { project_key: string | null }): Form => ({
  id: row.id,
  key: row.key,
  projectId: row.project_id,
  projectKey: row.project_key,
  name: row.name,
  enabled: toBool(row.enabled),
  uploadsEnabled: toBool(row.uploads_enabled),
  honeypot: row.honeypot,
  websites: fromJson<string[]>(row.websites) ?? [],
  blockedIps: fromJson<string[]>(row.blocked_ips) ?? [],
  successUrl: row.success_url,
  errorUrl: row.error_url,
  redirectUrl: row.redirect_url,
  webhookUrl: row.webhook_url,
  webhookSecret: row.webhook_secret,
  notifyEmails: fromJson<string[]>(row.notify_emails) ?? [],
  slackWebhookUrl: row.slack_webhook_url,
  discordWebhookUrl: row.discord_webhook_url,
  retentionDays: row.retention_days === null ? null : Number(row.retention_days),
  deleteFilesAfterDelivery: toBool(row.delete_files_after_delivery),
  captcha:
    row.captcha_provider && row.captcha_secret
      ? {
          provider: row.captcha_provider as CaptchaProvider,
          secret: row.captcha_secret,
          minScore: row.captcha_min_score === null ? null : Number(row.captcha_min_score),
        }
      : null,
  notifications: settingsOf<NotificationSettings>(row.notifications) ?? null,
  autoResponse: settingsOf<AutoResponseSettings>(row.auto_response) ?? null,
  webhooks: settingsOf<WebhookRoute[]>(row.webhooks) ?? [],
  fieldRules: settingsOf<FieldRules>(row.field_rules) ?? null,
  filePolicy: settingsOf<FilePolicy>(row.file_policy) ?? null,
  spamChecks: settingsOf<SpamChecks>(row.spam_checks) ?? null,
  analytics: fromJson<AnalyticsSettings>(row.analytics) ?? null,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toRow = (form: Form): Selectable<FormsTable> => ({
  id: form.id,
  key: form.key,
  name: form.name,
  enabled: fromBool(form.enabled),
  uploads_enabled: fromBool(form.uploadsEnabled),
  honeypot: form.honeypot,
  websites: toJson(form.websites),
  blocked_ips: toJson(form.blockedIps),
  success_url: form.successUrl,
  error_url: form.errorUrl,
  redirect_url: form.redirectUrl,
  webhook_url: form.webhookUrl,
  webhook_secret: form.webhookSecret,
  notify_emails: toJson(form.notifyEmails),
  slack_webhook_url: form.slackWebhookUrl,
  discord_webhook_url: form.discordWebhookUrl,
  retention_days: form.retentionDays,
  delete_files_after_delivery: fromBool(form.deleteFilesAfterDelivery),
  captcha_provider: form.captcha?.provider ?? null,
  captcha_secret: form.captcha?.secret ?? null,
  captcha_min_score: form.captcha?.minScore ?? null,
  created_at: form.createdAt,
  updated_at: form.updatedAt,
  project_id: form.projectId,
  notifications: form.notifications ? toJson(form.notifications) : null,
  auto_response: form.autoResponse ? toJson(form.autoResponse) : null,
  webhooks: form.webhooks.length > 0 ? toJson(form.webhooks) : null,
  field_rules: form.fieldRules ? toJson(form.fieldRules) : null,
  file_policy: form.filePolicy ? toJson(form.filePolicy) : null,
  spam_checks: form.spamChecks ? toJson(form.spamChecks) : null,
  analytics: form.analytics ? toJson(form.analytics) : null,
});

/** Forms with the key of their project. */
const withProjectKey = (db: Executor) =>
  db.selectFrom('forms').leftJoin('projects', 'projects.id', 'forms.project_id').selectAll('forms').select('projects.key as project_key');

export class FormStore {
  async insert(db: Executor, form: Form): Promise<void> {
    await db.insertInto('forms').values(toRow(form)).execute();
  }

  async update(db: Executor, form: Form): Promise<void> {
    const { id, key, created_at, ...changes } = toRow(form);
    await db.updateTable('forms').set(changes).where('id', '=', id).execute();
  }

  async findByKey(db: Executor, key: string): Promise<Form | undefined> {
    const row = await withProjectKey(db).where('forms.key', '=', key).executeTakeFirst();
    return row ? toForm(row) : undefined;
  }

  async list(db: Executor): Promise<Form[]> {
    const rows = await withProjectKey(db).orderBy('forms.created_at', 'desc').orderBy('forms.id', 'desc').execute();
    return rows.map(toForm);
  }

  /** The forms of a project, by key. */
  async listOfProject(db: Executor, projectId: string): Promise<Form[]> {
    const rows = await withProjectKey(db).where('forms.project_id', '=', projectId).orderBy('forms.key').execute();
    return rows.map(toForm);
  }

  /** Deletes the form; its submissions, files and pending deliveries go with it (foreign keys cascade). */
  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('forms').where('id', '=', id).execute();
  }

  /** The signing secret of a form's webhook; null when the form is gone or has no webhook URL any more. */
  async findWebhookSecret(db: Executor, formId: string): Promise<string | null> {
    const row = await db.selectFrom('forms').select(['webhook_secret', 'webhook_url', 'webhooks']).where('id', '=', formId).executeTakeFirst();
    return row?.webhook_url || row?.webhooks ? row.webhook_secret : null;
  }
}
