import { isIP } from 'node:net';
import type { FieldProblem } from '../errors.ts';
import { DEFAULT_MAIL_SETTINGS, type FormMailSettings, mailSettingsProblems } from './form-mail.ts';
import { type Condition, conditionProblem } from '../targeting/index.ts';
import { type FieldRules, fieldRulesProblems } from './field-rules.ts';

export const CAPTCHA_PROVIDERS = ['turnstile', 'hcaptcha', 'recaptcha'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

/** A form's CAPTCHA check (issue 12): the provider's widget token is verified before a submission is stored. */
export interface CaptchaSettings {
  provider: CaptchaProvider;
  /** The provider's secret key; write-only in the admin API. */
  secret: string;
  /** Lowest score accepted (reCAPTCHA v3, hCaptcha Enterprise), 0 to 1; null: any successful check. */
  minScore?: number | null;
}

/**
 * What files a form takes (issue 34), within the instance's limits: types detected from the bytes, and
 * sizes and counts at most the instance's. Absent limits are the instance's.
 */
export type FilePolicy = {
  /** MIME types (`image/png`) or families (`image/*`); empty: any type. */
  allowedTypes: string[];
  maxFileBytes?: number | null;
  maxFiles?: number | null;
  maxTotalBytes?: number | null;
};

/** The spam checks of a form beside honeypot and CAPTCHA (issue 34, docs/adr/0046-spam-checks.md); each absent one is off. */
export type SpamChecks = {
  /** The same normalised fields within the window (default 60 minutes) are spam. */
  duplicates?: { enabled: boolean; windowMinutes?: number | null } | null;
  /** Submitted sooner than this many seconds after the form was rendered (signed timestamp or Formspree's page-load time): spam. */
  minFillSeconds?: number | null;
  /** An e-mail field on a disposable domain (the disposable-email-domains-js list): spam. */
  disposableEmails?: boolean | null;
  /** Most submissions in a minute, per client address and over all: more are refused with 429. */
  rateLimit?: { perAddress?: number | null; perMinute?: number | null } | null;
  /** Conditions of the targeting engine over the fields (`message` `matches`, `country` `in`, `$ip` `inCidr`): any that holds is spam. */
  rules?: Condition[] | null;
  /** An ALTCHA proof of work is required (a self-hosted CAPTCHA): no solution is refused. */
  proofOfWork?: boolean | null;
};

/** What a form counts beside its submissions (issue 34): `views` turns on GET /v1/s/{formKey}/view. */
export type AnalyticsSettings = { views: boolean };

/** The settings of a form (contract "Admin API" form settings; e-mail and routing: form-mail.ts). */
export interface FormSettings extends FormMailSettings {
  name: string;
  enabled: boolean;
  uploadsEnabled: boolean;
  /** Field name that only bots fill in (contract D17); null: no honeypot. */
  honeypot: string | null;
  /** Allowed origins such as `https://example.com`; empty: any website (contract D19). */
  websites: string[];
  /** Client addresses or CIDR ranges whose submissions are refused. */
  blockedIps: string[];
  successUrl: string | null;
  errorUrl: string | null;
  /** Where the "go back" link of the result pages leads; the submitting page when null. */
  redirectUrl: string | null;
  webhookUrl: string | null;
  notifyEmails: string[];
  /** Slack and Discord incoming-webhook URLs (issue 12): a chat message per submission. */
  slackWebhookUrl: string | null;
  discordWebhookUrl: string | null;
  /** Submissions older than this many days are deleted with their files (issue 12); null: kept. */
  retentionDays: number | null;
  /** Drop a submission's files once all its deliveries succeeded (at least one). */
  deleteFilesAfterDelivery: boolean;
  captcha: CaptchaSettings | null;
  /** A JSON Schema subset over the fields, checked before anything is stored (field-rules.ts); null: none. */
  fieldRules: FieldRules | null;
  filePolicy: FilePolicy | null;
  spamChecks: SpamChecks | null;
  /** null: no views counted. */
  analytics: AnalyticsSettings | null;
}

export interface Form extends FormSettings {
  id: string;
  key: string;
  /** The project the form belongs to, whose roles apply to it (docs/adr/0033-project-roles.md); null: instance-wide. */
  projectId: string | null;
  projectKey: string | null;
  /** Signing secret of the webhook (`whsec_` + base64), shown once. */
  webhookSecret: string | null;
  createdAt: string;
  updatedAt: string;
}

export const DEFAULT_SETTINGS: Omit<FormSettings, 'name'> = {
  enabled: true,
  uploadsEnabled: false,
  honeypot: '_trap',
  websites: [],
  blockedIps: [],
  successUrl: null,
  errorUrl: null,
  redirectUrl: null,
  webhookUrl: null,
  notifyEmails: [],
  slackWebhookUrl: null,
  discordWebhookUrl: null,
  retentionDays: null,
  deleteFilesAfterDelivery: false,
  captcha: null,
  ...DEFAULT_MAIL_SETTINGS,
  fieldRules: null,
  filePolicy: null,
  spamChecks: null,
  analytics: null,
};

/** A PATCH body: an absent field keeps its value, null clears it (contract "Admin API"). */
export type FormPatch = { [K in keyof FormSettings]?: FormSettings[K] | null };

const URL_FIELDS = ['successUrl', 'errorUrl', 'redirectUrl', 'webhookUrl', 'slackWebhookUrl', 'discordWebhookUrl'] as const;
const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

/**
 * Applies a create or PATCH body to settings, normalising websites to origins, and returns the problems
 * found. Cleared lists become empty and a cleared honeypot disables it; name, enabled and uploadsEnabled
 * cannot be cleared.
 */
export function applySettings(base: FormSettings, patch: FormPatch): { settings: FormSettings; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const next: FormSettings = { ...base };
  const problem = (field: string, reason: string) => problems.push({ field: `body.${field}`, reason });

  if (patch.name !== undefined) {
    if (patch.name === null || patch.name.trim() === '') problem('name', 'must be a non-empty string');
    else next.name = patch.name.trim();
  }
  if (patch.retentionDays !== undefined) next.retentionDays = patch.retentionDays;
  for (const flag of ['enabled', 'uploadsEnabled', 'deleteFilesAfterDelivery'] as const) {
    if (patch[flag] === null) problem(flag, 'cannot be cleared');
    else if (patch[flag] !== undefined) next[flag] = patch[flag];
  }
  if (patch.honeypot !== undefined) next.honeypot = patch.honeypot === null || patch.honeypot === '' ? null : patch.honeypot;
  for (const field of URL_FIELDS) {
    const value = patch[field];
    if (value === undefined) continue;
    if (value === null) next[field] = null;
    else if (!isHttpUrl(value)) problem(field, 'must be an absolute http or https URL');
    else next[field] = value;
  }
  if (patch.websites !== undefined) {
    next.websites = [];
    (patch.websites ?? []).forEach((site, i) => {
      if (!isHttpUrl(site)) problem(`websites.${i}`, 'must be an origin such as https://example.com');
      else next.websites.push(new URL(site).origin);
    });
  }
  if (patch.blockedIps !== undefined) {
    next.blockedIps = patch.blockedIps ?? [];
    next.blockedIps.forEach((entry, i) => {
      if (!isAddressOrRange(entry)) problem(`blockedIps.${i}`, 'must be an IP address or a CIDR range');
    });
  }
  if (patch.notifyEmails !== undefined) {
    next.notifyEmails = patch.notifyEmails ?? [];
    next.notifyEmails.forEach((email, i) => {
      if (!EMAIL.test(email)) problem(`notifyEmails.${i}`, 'must be an e-mail address');
    });
  }
  // E-mail and routing (issue 34): each replaced whole; null turns it off.
  if (patch.notifications !== undefined) next.notifications = patch.notifications;
  if (patch.autoResponse !== undefined) next.autoResponse = patch.autoResponse;
  if (patch.webhooks !== undefined) next.webhooks = patch.webhooks ?? [];
  mailSettingsProblems(next, problem);
  if (patch.captcha !== undefined) {
    next.captcha = patch.captcha === null ? null : { provider: patch.captcha.provider, secret: patch.captcha.secret, minScore: patch.captcha.minScore ?? null };
  }
  if (patch.fieldRules !== undefined) {
    next.fieldRules = patch.fieldRules;
    if (patch.fieldRules) problems.push(...fieldRulesProblems(patch.fieldRules));
  }
  if (patch.filePolicy !== undefined) {
    next.filePolicy = patch.filePolicy && { ...patch.filePolicy, allowedTypes: patch.filePolicy.allowedTypes.map((t) => t.toLowerCase()) };
    const policy = patch.filePolicy;
    if (policy && policy.maxFileBytes && policy.maxTotalBytes && policy.maxFileBytes > policy.maxTotalBytes)
      problem('filePolicy.maxTotalBytes', 'must be at least maxFileBytes');
  }
  if (patch.spamChecks !== undefined) {
    next.spamChecks = patch.spamChecks;
    (patch.spamChecks?.rules ?? []).forEach((condition, i) => {
      const why = conditionProblem(condition);
      if (why) problem(`spamChecks.rules.${i}`, why.message);
    });
  }
  if (patch.analytics !== undefined) next.analytics = patch.analytics;
  return { settings: next, problems };
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || !address || isIP(address) === 0) return false;
  if (prefix === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= max;
}

/** The admin view of a form. The webhook secret is never part of it: it is shown once, when created. */
export function formView(form: Form, publicUrl: string) {
  return {
    key: form.key,
    name: form.name,
    projectKey: form.projectKey,
    endpoint: `${publicUrl}/v1/s/${form.key}`,
    enabled: form.enabled,
    uploadsEnabled: form.uploadsEnabled,
    honeypot: form.honeypot,
    websites: form.websites,
    blockedIps: form.blockedIps,
    successUrl: form.successUrl,
    errorUrl: form.errorUrl,
    redirectUrl: form.redirectUrl,
    webhookUrl: form.webhookUrl,
    notifyEmails: form.notifyEmails,
    slackWebhookUrl: form.slackWebhookUrl,
    discordWebhookUrl: form.discordWebhookUrl,
    retentionDays: form.retentionDays,
    deleteFilesAfterDelivery: form.deleteFilesAfterDelivery,
    // The secret is write-only: the view says which provider checks and from which score.
    captcha: form.captcha ? { provider: form.captcha.provider, minScore: form.captcha.minScore ?? null } : null,
    notifications: form.notifications,
    autoResponse: form.autoResponse,
    webhooks: form.webhooks,
    fieldRules: form.fieldRules,
    filePolicy: form.filePolicy,
    spamChecks: form.spamChecks,
    analytics: form.analytics,
    createdAt: form.createdAt,
    updatedAt: form.updatedAt,
  };
}
