import { randomBytes } from 'node:crypto';
import { type Actor, type AuditLog, changesOf } from '../audit/index.ts';
import { newId, newKey, nowIso } from '../db/codec.ts';
import type { Db, Executor } from '../db/database.ts';
import type { DomainEvents } from '../events/index.ts';
import { AppError, type FieldProblem, message } from '../errors.ts';
import { applySettings, DEFAULT_SETTINGS, type Form, type FormPatch, formView } from './form.ts';
import { changedSettings, type DocumentForm, formDocument, settingsFromDocument } from './form-document.ts';
import type { FormStore } from './form.store.ts';
import type { ProjectService } from '../projects/index.ts';

/** A form as answered by create and update: `webhookSecret` only when one was just generated. */
export interface FormWithSecret {
  form: Form;
  webhookSecret?: string;
}

/** Standard Webhooks style secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface FormServiceDeps {
  db: Db;
  store: FormStore;
  audit: Pick<AuditLog, 'record'>;
  clock: () => Date;
  /** Announces form.deleting in the delete's transaction (submissions forget the objects of their files). */
  events: DomainEvents;
  projects: Pick<ProjectService, 'findProject'>;
  /** The delivery policy's verdict on a webhook URL (outbox's WebhookTargetRule); absent: not judged here. */
  webhookTargets?: { refusal(url: string): string | undefined };
}

/** A create or PATCH body: the settings, and the project the form belongs to. */
export type FormInput = FormPatch & { projectKey?: string | null };

const REDACTED = '[redacted]';

/**
 * A form as the audit log sees it: secrets (the webhook signing secret, the chat webhook URLs, which
 * are credentials, and the CAPTCHA secret) only as "[redacted]" or null, so a change shows without its value.
 */
function audited(form: Form) {
  const hidden = (value: string | null) => (value ? REDACTED : null);
  // The admin view without what is not a setting; its captcha already leaves the secret out.
  const {
    key: _key,
    endpoint: _endpoint,
    createdAt: _created,
    updatedAt: _updated,
    captcha,
    slackWebhookUrl,
    discordWebhookUrl,
    ...settings
  } = formView(form, '');
  return {
    ...settings,
    captcha: captcha && { ...captcha, secret: REDACTED },
    slackWebhookUrl: hidden(slackWebhookUrl),
    discordWebhookUrl: hidden(discordWebhookUrl),
    webhookSecret: hidden(form.webhookSecret),
  };
}
type AuditedForm = ReturnType<typeof audited>;
const AUDITED_FIELDS = Object.keys(
  audited({
    ...DEFAULT_SETTINGS,
    name: '',
    id: '',
    key: '',
    projectId: null,
    projectKey: null,
    webhookSecret: null,
    createdAt: '',
    updatedAt: '',
  }),
) as Array<keyof AuditedForm>;
/** The changed settings; a secret replaced by another shows as a change of "[redacted]" to "[redacted]". */
function formChanges(before: Form | null, after: Form | null) {
  const changes = changesOf(before && audited(before), after && audited(after), AUDITED_FIELDS);
  if (before && after) {
    const secrets = {
      slackWebhookUrl: [before.slackWebhookUrl, after.slackWebhookUrl],
      discordWebhookUrl: [before.discordWebhookUrl, after.discordWebhookUrl],
      webhookSecret: [before.webhookSecret, after.webhookSecret],
      captcha: [before.captcha?.secret, after.captcha?.secret],
    };
    for (const [field, [was, is]] of Object.entries(secrets)) {
      if (was && is && was !== is && !changes[field])
        changes[field] = { before: audited(before)[field as keyof AuditedForm], after: audited(after)[field as keyof AuditedForm] };
    }
  }
  return changes;
}

/** A form signs its webhooks when it has any: the one `webhookUrl` or further `webhooks` (issue 34). */
const signsWebhooks = (s: Pick<Form, 'webhookUrl' | 'webhooks'>) => s.webhookUrl !== null || s.webhooks.length > 0;

export class FormService {
  constructor(private readonly deps: FormServiceDeps) {}

  /** Creates a form with the default settings overridden by `input`; a webhook URL gets a new secret. */
  async create(input: FormInput & { name: string }, actor: Actor): Promise<FormWithSecret> {
    const { settings, problems } = applySettings({ ...DEFAULT_SETTINGS, name: '' }, input);
    const project = await this.projectOf(input.projectKey ?? null, problems);
    problems.push(...this.unreachable(input));
    if (problems.length > 0) throw AppError.validation(problems);
    const now = nowIso(this.deps.clock);
    const webhookSecret = signsWebhooks(settings) ? newWebhookSecret() : undefined;
    const form: Form = {
      ...settings,
      ...project,
      id: newId(),
      key: newKey(12),
      webhookSecret: webhookSecret ?? null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.insert(trx, form);
      await this.deps.audit.record(trx, actor, {
        projectId: form.projectId,
        entity: 'form',
        entityId: form.key,
        action: 'form.created',
        changes: formChanges(null, form),
      });
    });
    return { form, webhookSecret };
  }

  /** Webhook URLs being set that the delivery policy can never let through (a loopback address under `public`). */
  private unreachable(patch: FormPatch): Array<{ field: string; reason: string }> {
    const problems: Array<{ field: string; reason: string }> = [];
    for (const field of ['webhookUrl', 'slackWebhookUrl', 'discordWebhookUrl'] as const) {
      const value = patch[field];
      const why = typeof value === 'string' ? this.deps.webhookTargets?.refusal(value) : undefined;
      if (why) problems.push({ field: `body.${field}`, reason: why });
    }
    (patch.webhooks ?? []).forEach((hook, i) => {
      const why = typeof hook?.url === 'string' ? this.deps.webhookTargets?.refusal(hook.url) : undefined;
      if (why) problems.push({ field: `body.webhooks.${i}.url`, reason: why });
    });
    return problems;
  }

  /** The form with this key; throws not-found otherwise. */
  async get(formKey: string): Promise<Form> {
    const form = await this.deps.store.findByKey(this.deps.db, formKey);
    if (!form) throw new AppError('not_found', message('adminFormNotFound', { formKey }));
    return form;
  }

  /** The form with this key, or undefined (the submission endpoint answers its own 404). */
  async find(formKey: string): Promise<Form | undefined> {
    return this.deps.store.findByKey(this.deps.db, formKey);
  }

  async list(): Promise<Form[]> {
    return this.deps.store.list(this.deps.db);
  }

  /**
   * PATCH semantics: absent keeps, null clears. Setting a webhook URL on a form without a secret generates
   * one (returned once); clearing the URL drops the secret.
   */
  async update(formKey: string, patch: FormInput, actor: Actor): Promise<FormWithSecret> {
    const current = await this.get(formKey);
    const { settings, problems } = applySettings(current, patch);
    const project =
      patch.projectKey === undefined ? { projectId: current.projectId, projectKey: current.projectKey } : await this.projectOf(patch.projectKey, problems);
    problems.push(...this.unreachable(patch));
    if (problems.length > 0) throw AppError.validation(problems);
    let webhookSecret: string | undefined;
    let secret = current.webhookSecret;
    if (!signsWebhooks(settings)) secret = null;
    else if (!secret) secret = webhookSecret = newWebhookSecret();
    const form: Form = { ...current, ...settings, ...project, webhookSecret: secret, updatedAt: nowIso(this.deps.clock) };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.update(trx, form);
      await this.deps.audit.record(trx, actor, {
        projectId: form.projectId,
        entity: 'form',
        entityId: form.key,
        action: 'form.updated',
        changes: formChanges(current, form),
      });
    });
    return { form, webhookSecret };
  }

  /** Replaces the webhook signing secret; the new one is returned once. */
  async rotateWebhookSecret(formKey: string, actor: Actor): Promise<string> {
    const current = await this.get(formKey);
    if (!signsWebhooks(current)) {
      throw AppError.validation([{ field: 'body.webhookUrl', reason: 'the form has no webhook URL' }]);
    }
    const webhookSecret = newWebhookSecret();
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.store.update(trx, { ...current, webhookSecret, updatedAt: nowIso(this.deps.clock) });
      await this.deps.audit.record(trx, actor, {
        projectId: current.projectId,
        entity: 'form',
        entityId: formKey,
        action: 'form.webhook_secret_rotated',
        changes: { webhookSecret: { before: REDACTED, after: REDACTED } },
      });
    });
    return webhookSecret;
  }

  async delete(formKey: string, actor: Actor): Promise<void> {
    const form = await this.get(formKey);
    await this.deps.events.transaction(this.deps.db, async (trx, emit) => {
      await emit({ type: 'form.deleting', formId: form.id });
      await this.deps.store.delete(trx, form.id);
      await this.deps.audit.record(trx, actor, {
        projectId: form.projectId,
        entity: 'form',
        entityId: formKey,
        action: 'form.deleted',
        changes: formChanges(form, null),
      });
    });
  }

  /** The project of a `projectKey` (null: none); an unknown key is a problem of the body. */
  private async projectOf(projectKey: string | null, problems: FieldProblem[]): Promise<{ projectId: string | null; projectKey: string | null }> {
    if (projectKey === null) return { projectId: null, projectKey: null };
    const project = await this.deps.projects.findProject(projectKey);
    if (!project) problems.push({ field: 'body.projectKey', reason: 'is not the key of a project' });
    return { projectId: project?.id ?? null, projectKey: project?.key ?? null };
  }

  /** A project's forms as a project document carries them, by key (forms as code, issue 34). */
  async documentForms(db: Executor, projectId: string): Promise<Record<string, DocumentForm>> {
    return Object.fromEntries((await this.deps.store.listOfProject(db, projectId)).map((form) => [form.key, formDocument(form)]));
  }

  /**
   * Makes a project's forms match a document's `forms` in the caller's transaction (`dryRun`: only the
   * plan): a form of another key is created with that key, one that differs is updated, one that matches
   * is left alone (a second apply changes nothing). Forms of the project the document does not name are
   * kept: deleting a form deletes its submissions, which a document does not hold. `project` is
   * undefined for a project a dry run would create. Problems are a 400 naming the document's paths; a
   * key used by a form of another project (or of none) is a 409.
   */
  async applyDocumentForms(
    trx: Executor,
    project: { id: string; key: string } | undefined,
    forms: Readonly<Record<string, DocumentForm>>,
    actor: Actor,
    dryRun: boolean,
  ): Promise<Array<{ action: 'create' | 'update'; key: string; fields?: string[] }>> {
    const steps: Array<{ action: 'create' | 'update'; key: string; fields?: string[] }> = [];
    const writes: Array<() => Promise<void>> = [];
    const problems: FieldProblem[] = [];
    const now = nowIso(this.deps.clock);
    for (const [key, doc] of Object.entries(forms)) {
      const at = `body.document.forms.${key}`;
      const current = await this.deps.store.findByKey(trx, key);
      if (current && (project === undefined || current.projectId !== project.id))
        throw new AppError('conflict', message('documentFormElsewhere', { formKey: key }));
      const { settings, problems: found } = settingsFromDocument(doc, current, at);
      problems.push(...found, ...this.unreachable(settings).map((p) => ({ ...p, field: p.field.replace(/^body/, at) })));
      if (found.length > 0) continue;
      if (!current) {
        steps.push({ action: 'create', key });
        const form: Form = {
          ...settings,
          id: newId(),
          key,
          projectId: project?.id ?? null,
          projectKey: project?.key ?? null,
          webhookSecret: signsWebhooks(settings) ? newWebhookSecret() : null,
          createdAt: now,
          updatedAt: now,
        };
        writes.push(async () => {
          await this.deps.store.insert(trx, form);
          await this.deps.audit.record(trx, actor, {
            projectId: form.projectId,
            entity: 'form',
            entityId: key,
            action: 'form.created',
            changes: formChanges(null, form),
          });
        });
        continue;
      }
      const fields = changedSettings(current, settings);
      if (fields.length === 0) continue;
      steps.push({ action: 'update', key, fields });
      const secret = !signsWebhooks(settings) ? null : (current.webhookSecret ?? newWebhookSecret());
      const form: Form = { ...current, ...settings, webhookSecret: secret, updatedAt: now };
      writes.push(async () => {
        await this.deps.store.update(trx, form);
        await this.deps.audit.record(trx, actor, {
          projectId: form.projectId,
          entity: 'form',
          entityId: key,
          action: 'form.updated',
          changes: formChanges(current, form),
        });
      });
    }
    if (problems.length > 0) throw AppError.validation(problems);
    if (!dryRun) for (const write of writes) await write();
    return steps;
  }

  /** The current signing secret of a form's webhook, null when it has none (any more): deliveries sign with it. */
  async webhookSecretOf(formId: string): Promise<string | null> {
    return this.deps.store.findWebhookSecret(this.deps.db, formId);
  }
}
