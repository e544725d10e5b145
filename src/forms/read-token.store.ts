import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { FormReadToken } from './read-token.ts';
import type { FormReadTokensTable } from './read-token.table.ts';

const toToken = (row: Selectable<FormReadTokensTable>): FormReadToken => ({
  id: row.id,
  formId: row.form_id,
  name: row.name,
  tokenPrefix: row.token_prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

export class FormReadTokenStore {
  async insert(db: Executor, token: FormReadToken, tokenHash: string): Promise<void> {
    await db
      .insertInto('form_read_tokens')
      .values({
        id: token.id,
        form_id: token.formId,
        name: token.name,
        token_prefix: token.tokenPrefix,
        token_hash: tokenHash,
        created_at: token.createdAt,
        last_used_at: null,
      })
      .execute();
  }

  async list(db: Executor, formId: string): Promise<FormReadToken[]> {
    const rows = await db.selectFrom('form_read_tokens').selectAll().where('form_id', '=', formId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toToken);
  }

  /** Deletes a token of the form; the deleted token, or undefined when the form has none with this id. */
  async delete(db: Executor, formId: string, id: string): Promise<FormReadToken | undefined> {
    const row = await db.selectFrom('form_read_tokens').selectAll().where('form_id', '=', formId).where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    await db.deleteFrom('form_read_tokens').where('id', '=', id).execute();
    return toToken(row);
  }

  /** The token with this hash and the key of its form. */
  async findByHash(db: Executor, tokenHash: string): Promise<(FormReadToken & { formKey: string }) | undefined> {
    const row = await db
      .selectFrom('form_read_tokens')
      .innerJoin('forms', 'forms.id', 'form_read_tokens.form_id')
      .selectAll('form_read_tokens')
      .select('forms.key as form_key')
      .where('form_read_tokens.token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row ? { ...toToken(row), formKey: row.form_key } : undefined;
  }

  async touch(db: Executor, id: string, at: string): Promise<void> {
    await db.updateTable('form_read_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
