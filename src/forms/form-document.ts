import { applySettings, DEFAULT_SETTINGS, type Form, type FormPatch, type FormSettings } from './form.ts';

// Forms as code (issue 34): a form as a project document carries it (documents/project-document.ts),
// by key, with its settings; defaults are left out, so that a document shows what was configured. Pure.
//
// Secrets never leave in clear: the CAPTCHA secret and the Slack and Discord webhook URLs (credentials)
// are exported as `$NAME` references (`$FLAGPOST_FORM_<KEY>_CAPTCHA_SECRET`, ...). Where a document is
// applied, a reference the caller did not resolve (the command line resolves those its environment
// holds) keeps the stored secret; without a stored one it is a 400. The webhook signing secret is not
// part of a document: a form that signs gets one of its own (POST .../webhook-secret shows a new one).

/** A form's settings as a document writes them: `name` and every setting that is not its default. */
export type DocumentForm = FormPatch & { name: string };

/** A secret's reference: `$` and an environment variable's name. */
export const SECRET_REFERENCE = /^\$([A-Z_][A-Z0-9_]{0,127})$/;

/** The secrets of a form a document names by reference. */
export const SECRET_SETTINGS = ['captcha.secret', 'slackWebhookUrl', 'discordWebhookUrl'] as const;

/** The environment variable a form's secret is exported as. */
export function secretVariable(formKey: string, setting: (typeof SECRET_SETTINGS)[number]): string {
  const suffix = { 'captcha.secret': 'CAPTCHA_SECRET', slackWebhookUrl: 'SLACK_WEBHOOK_URL', discordWebhookUrl: 'DISCORD_WEBHOOK_URL' }[setting];
  return `FLAGPOST_FORM_${formKey.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${suffix}`;
}

/** The order settings are written in (the admin API's), so that re-exports are identical. */
const ORDER: ReadonlyArray<keyof FormSettings> = [
  'name',
  'enabled',
  'uploadsEnabled',
  'honeypot',
  'websites',
  'blockedIps',
  'successUrl',
  'errorUrl',
  'redirectUrl',
  'webhookUrl',
  'notifyEmails',
  'slackWebhookUrl',
  'discordWebhookUrl',
  'retentionDays',
  'deleteFilesAfterDelivery',
  'captcha',
  'notifications',
  'autoResponse',
  'webhooks',
  'fieldRules',
  'filePolicy',
  'spamChecks',
  'analytics',
];

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** JSON with object keys sorted: key order never reads as a change. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The settings of a form, secrets replaced by their references. */
function withReferences(form: Form): FormSettings {
  const { id: _id, key: _key, projectId: _p, projectKey: _pk, webhookSecret: _w, createdAt: _c, updatedAt: _u, ...settings } = form;
  return {
    ...settings,
    slackWebhookUrl: form.slackWebhookUrl === null ? null : `$${secretVariable(form.key, 'slackWebhookUrl')}`,
    discordWebhookUrl: form.discordWebhookUrl === null ? null : `$${secretVariable(form.key, 'discordWebhookUrl')}`,
    captcha: form.captcha && { ...form.captcha, secret: `$${secretVariable(form.key, 'captcha.secret')}` },
  };
}

/** A form as a document writes it: the name, then each setting that is not its default, secrets as references. */
export function formDocument(form: Form): DocumentForm {
  const settings = withReferences(form);
  const out: Record<string, unknown> = {};
  for (const name of ORDER) {
    if (name !== 'name' && same(settings[name], (DEFAULT_SETTINGS as Record<string, unknown>)[name])) continue;
    out[name] = settings[name];
  }
  return out as DocumentForm;
}

/** The settings a form will have once a document's entry is applied: every absent setting its default. */
export function documentSettings(doc: DocumentForm): FormPatch {
  const full: Record<string, unknown> = { ...DEFAULT_SETTINGS };
  // null is a value (no honeypot, no retention), as in a PATCH; only an absent setting takes its default.
  for (const [name, value] of Object.entries(doc)) if (value !== undefined) full[name] = value;
  return full as FormPatch;
}

/**
 * The settings a document's entry gives the form `current` (undefined: a new one), with problems as
 * field paths under `at`: each secret reference replaced by the stored secret, or a problem when none
 * is stored.
 */
export function settingsFromDocument(
  doc: DocumentForm,
  current: Form | undefined,
  at: string,
): { settings: FormSettings; problems: Array<{ field: string; reason: string }> } {
  const patch = documentSettings(doc);
  const problems: Array<{ field: string; reason: string }> = [];
  const resolve = (value: string | null | undefined, stored: string | null | undefined, field: string): string | null | undefined => {
    if (typeof value !== 'string') return value;
    const reference = SECRET_REFERENCE.exec(value);
    if (!reference) return value;
    if (stored) return stored;
    problems.push({
      field,
      reason: `is the reference $${reference[1]}, which was not resolved where the document was applied, and the form has no secret to keep`,
    });
    return null;
  };
  patch.slackWebhookUrl = resolve(patch.slackWebhookUrl, current?.slackWebhookUrl, `${at}.slackWebhookUrl`);
  patch.discordWebhookUrl = resolve(patch.discordWebhookUrl, current?.discordWebhookUrl, `${at}.discordWebhookUrl`);
  if (patch.captcha) patch.captcha = { ...patch.captcha, secret: resolve(patch.captcha.secret, current?.captcha?.secret, `${at}.captcha.secret`) ?? '' };
  const applied = applySettings(current ?? { ...DEFAULT_SETTINGS, name: '' }, patch);
  problems.push(...applied.problems.map((p) => ({ field: `${at}.${p.field.replace(/^body\./, '')}`, reason: p.reason })));
  return { settings: applied.settings, problems };
}

/** The settings that differ between a form and what a document gives it. */
export function changedSettings(current: Form, next: FormSettings): string[] {
  return ORDER.filter((name) => !same(current[name], next[name]));
}
