import type { Actor, AuditLog } from '../audit/index.ts';
import { newId, newKey } from '../db/codec.ts';
import type { Db } from '../db/database.ts';
import { AppError, message } from '../errors.ts';
import { hashToken } from '../identity/index.ts';
import type { FormService } from './form.service.ts';
import { FORM_READ_TOKEN_PREFIX, type FormReadToken } from './read-token.ts';
import type { FormReadTokenStore } from './read-token.store.ts';

export interface FormReadTokenServiceDeps {
  db: Db;
  store: FormReadTokenStore;
  forms: Pick<FormService, 'get'>;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
}

/** Tokens of a form at most: integrations are few, and each token is a secret to rotate. */
export const MAX_READ_TOKENS_PER_FORM = 20;

/**
 * Per-form read-only tokens for integrations (issue 34, docs/adr/0049-form-search-and-read-tokens.md):
 * made, listed and deleted by the form's editors; the admin gate asks `readerOf` who a bearer token is.
 * Kept like every bearer secret of Flagpost: the SHA-256 hash only (identity/token-hash.ts).
 */
export class FormReadTokenService {
  constructor(private readonly deps: FormReadTokenServiceDeps) {}

  /** Makes a token for the form; the secret is in this answer only. */
  async create(formKey: string, name: string, actor: Actor): Promise<{ readToken: FormReadToken; token: string }> {
    const form = await this.deps.forms.get(formKey);
    const token = `${FORM_READ_TOKEN_PREFIX}${newKey(32)}`;
    const readToken: FormReadToken = {
      id: newId(),
      formId: form.id,
      name,
      tokenPrefix: token.slice(0, FORM_READ_TOKEN_PREFIX.length + 4),
      createdAt: this.deps.clock().toISOString(),
      lastUsedAt: null,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      if ((await this.deps.store.list(trx, form.id)).length >= MAX_READ_TOKENS_PER_FORM)
        throw new AppError('conflict', message('formReadTokenLimit', { formKey, max: MAX_READ_TOKENS_PER_FORM }));
      await this.deps.store.insert(trx, readToken, hashToken(token));
      await this.deps.audit.record(trx, actor, {
        projectId: form.projectId,
        entity: 'form',
        entityId: formKey,
        action: 'form.read_token_created',
        changes: { readToken: { after: { id: readToken.id, name, tokenPrefix: readToken.tokenPrefix } } },
      });
    });
    return { readToken, token };
  }

  async list(formKey: string): Promise<FormReadToken[]> {
    const form = await this.deps.forms.get(formKey);
    return this.deps.store.list(this.deps.db, form.id);
  }

  /** Deletes a token: it is refused from the next request on. */
  async revoke(formKey: string, id: string, actor: Actor): Promise<void> {
    const form = await this.deps.forms.get(formKey);
    await this.deps.db.transaction().execute(async (trx) => {
      const gone = await this.deps.store.delete(trx, form.id, id);
      if (!gone) throw new AppError('not_found', message('formReadTokenNotFound', { id, formKey }));
      await this.deps.audit.record(trx, actor, {
        projectId: form.projectId,
        entity: 'form',
        entityId: formKey,
        action: 'form.read_token_deleted',
        changes: { readToken: { before: { id, name: gone.name, tokenPrefix: gone.tokenPrefix } } },
      });
    });
  }

  /** The form a read token reads and the token's name; undefined for any other string. `markUsed` records the use. */
  async readerOf(token: string): Promise<{ formKey: string; name: string; markUsed(): Promise<void> } | undefined> {
    if (!token.startsWith(FORM_READ_TOKEN_PREFIX) || token.length > 200) return undefined;
    const found = await this.deps.store.findByHash(this.deps.db, hashToken(token));
    if (!found) return undefined;
    const markUsed = async () => {
      const now = this.deps.clock();
      // last_used_at at most once a minute: a polling integration must not write on every request.
      if (!found.lastUsedAt || now.getTime() - Date.parse(found.lastUsedAt) > 60_000) await this.deps.store.touch(this.deps.db, found.id, now.toISOString());
    };
    return { formKey: found.formKey, name: found.name, markUsed };
  }
}
