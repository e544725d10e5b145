import { type Condition, conditionProblem, MAX_CONDITIONS } from '../targeting/index.ts';
import { templateProblem } from './mail-template.ts';

// A form's e-mail and routing settings (issue 34, docs/adr/0048-form-mail-templates-and-deliveries.md):
// notifications people can answer, the auto-response to the submitter, and webhooks and notification
// addresses with conditions on fields (the targeting engine's conditions). Pure: types and checks.

/** Where a notification goes when its conditions hold (every one of them) for the submission's fields. */
export interface NotificationRoute {
  emails: string[];
  conditions: Condition[];
}

export interface NotificationSettings {
  /** The field whose address becomes Reply-To; absent: the first of `email`, `_replyto` that holds one. */
  replyToField?: string;
  /** Template of the subject (`New message from {{ name }}`). */
  subject?: string;
  /** Template of the sender's display name (the address stays FLAGPOST_MAIL_FROM's). */
  fromName?: string;
  cc?: string[];
  bcc?: string[];
  /** Notification addresses by condition, beside `notifyEmails` (which always get it). */
  routes?: NotificationRoute[];
}

export interface AutoResponseSettings {
  enabled: boolean;
  /** The field holding the submitter's address; absent: the first of `email`, `_replyto`. */
  toField?: string;
  subject: string;
  /** HTML template; the text part is made from it. */
  body: string;
  fromName?: string;
  /** The address answers to the auto-response go to. */
  replyTo?: string;
  /** Adds the submission's fields as a table below the body. */
  includeSubmission?: boolean;
}

/** One more webhook of a form, sent when its conditions hold (all of them; none: always). */
export interface WebhookRoute {
  url: string;
  conditions?: Condition[];
}

export interface FormMailSettings {
  notifications: NotificationSettings | null;
  autoResponse: AutoResponseSettings | null;
  webhooks: WebhookRoute[];
}

export const DEFAULT_MAIL_SETTINGS: FormMailSettings = { notifications: null, autoResponse: null, webhooks: [] };

/** The fields that hold the submitter's address when no field is named. */
export const DEFAULT_ADDRESS_FIELDS = ['email', '_replyto'] as const;

export const EMAIL = /^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.[^\s@<>(),;:"]+$/;

type Problem = (field: string, reason: string) => void;

function checkEmails(list: readonly string[] | undefined, field: string, problem: Problem): void {
  (list ?? []).forEach((email, i) => {
    if (!EMAIL.test(email)) problem(`${field}.${i}`, 'must be an e-mail address');
  });
}

function checkTemplate(source: string | undefined, field: string, problem: Problem): void {
  if (source === undefined) return;
  const reason = templateProblem(source);
  if (reason) problem(field, reason);
}

export function checkConditions(conditions: readonly Condition[] | undefined, field: string, problem: Problem): void {
  if (!conditions) return;
  if (conditions.length > MAX_CONDITIONS) problem(field, `more than ${MAX_CONDITIONS} conditions`);
  conditions.forEach((c, i) => {
    const found = conditionProblem(c);
    if (found) problem(`${field}.${i}${found.path.replace(/\//g, '.')}`, found.message);
  });
}

/** The problems of the mail and routing settings of a create or PATCH body (`body.` + field paths). */
export function mailSettingsProblems(settings: FormMailSettings, problem: Problem): void {
  const n = settings.notifications;
  if (n) {
    checkTemplate(n.subject, 'notifications.subject', problem);
    checkTemplate(n.fromName, 'notifications.fromName', problem);
    checkEmails(n.cc, 'notifications.cc', problem);
    checkEmails(n.bcc, 'notifications.bcc', problem);
    (n.routes ?? []).forEach((route, i) => {
      checkEmails(route.emails, `notifications.routes.${i}.emails`, problem);
      checkConditions(route.conditions, `notifications.routes.${i}.conditions`, problem);
    });
  }
  const a = settings.autoResponse;
  if (a) {
    checkTemplate(a.subject, 'autoResponse.subject', problem);
    checkTemplate(a.body, 'autoResponse.body', problem);
    checkTemplate(a.fromName, 'autoResponse.fromName', problem);
    if (a.replyTo !== undefined && !EMAIL.test(a.replyTo)) problem('autoResponse.replyTo', 'must be an e-mail address');
  }
  settings.webhooks.forEach((hook, i) => {
    if (!isHttpUrl(hook.url)) problem(`webhooks.${i}.url`, 'must be an absolute http or https URL');
    checkConditions(hook.conditions, `webhooks.${i}.conditions`, problem);
  });
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The one valid address a field holds: a single e-mail address (surrounding spaces ignored), else
 * undefined: a list, a name with an address, or text with a line break is no Reply-To.
 */
export function singleAddress(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return text.length <= 254 && EMAIL.test(text) ? text : undefined;
}

/** The submitter's address: the named field's, else the first of `email`, `_replyto` that holds one. */
export function submitterAddress(data: Record<string, unknown>, field: string | undefined): string | undefined {
  if (field) return Object.hasOwn(data, field) ? singleAddress(data[field]) : undefined;
  for (const name of DEFAULT_ADDRESS_FIELDS) {
    const found = Object.hasOwn(data, name) ? singleAddress(data[name]) : undefined;
    if (found) return found;
  }
  return undefined;
}
