import type { Selectable } from 'kysely';
import { fromBool, fromJson, toBool, toJson } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import type { Form } from './form.ts';
import type { FormsTable } from './form.table.ts';

const toForm = (row: Selectable<FormsTable>): Form => ({
  id: row.id,
  key: row.key,
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
  created_at: form.createdAt,
  updated_at: form.updatedAt,
});

export class FormStore {
  constructor(private readonly db: Db) {}

  async insert(form: Form): Promise<void> {
    await this.db.insertInto('forms').values(toRow(form)).execute();
  }

  async update(form: Form): Promise<void> {
    const { id, key, created_at, ...changes } = toRow(form);
    await this.db.updateTable('forms').set(changes).where('id', '=', id).execute();
  }

  async findByKey(key: string): Promise<Form | undefined> {
    const row = await this.db.selectFrom('forms').selectAll().where('key', '=', key).executeTakeFirst();
    return row ? toForm(row) : undefined;
  }

  async list(): Promise<Form[]> {
    const rows = await this.db.selectFrom('forms').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(toForm);
  }

  /** Deletes the form; its submissions, files and pending deliveries go with it (foreign keys cascade). */
  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('forms').where('id', '=', id).execute();
  }
}
