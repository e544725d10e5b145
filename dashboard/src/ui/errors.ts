import { ApiError, type FieldProblem } from '../api.ts';

// Human words for the API's refusals. The server answers a 400 with its schema validator's reasons
// (`must match pattern "^[A-Za-z0-9]…$"`, `must NOT have fewer than 10 characters`): this maps them,
// field by field, to what a person should do. Unknown reasons pass through unchanged.

/** `body.notifyEmails.2` → `Notify e-mails (line 3)`. */
export function fieldLabel(field: string): string {
  const parts = field.replace(/^(body|query|params)\./, '').split('.');
  const words = parts
    .filter((p) => !/^\d+$/.test(p))
    .map((p) =>
      p
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .replace(/Url\b/i, 'URL')
        .replace(/Ips\b/i, 'IPs')
        .replace(/Emails?\b/i, (m) => (m.endsWith('s') ? 'e-mails' : 'e-mail'))
        .toLowerCase(),
    )
    .join(' › ');
  const index = [...parts].reverse().find((p) => /^\d+$/.test(p));
  const text = words.charAt(0).toUpperCase() + words.slice(1);
  return index === undefined ? text : `${text} (item ${Number(index) + 1})`;
}

const KEY_LIKE = /slug|key|name$/i;

/** One validator reason, in words. */
export function humanReason(field: string, reason: string): string {
  let m: RegExpMatchArray | null;
  if ((m = reason.match(/^must NOT have fewer than (\d+) characters$/))) return Number(m[1]) === 1 ? 'Required' : `Use at least ${m[1]} characters`;
  if ((m = reason.match(/^must NOT have more than (\d+) characters$/))) return `Use at most ${m[1]} characters`;
  if ((m = reason.match(/^must NOT have more than (\d+) items$/))) return `At most ${m[1]} entries`;
  if ((m = reason.match(/^must NOT have fewer than (\d+) items$/))) return `At least ${m[1]} ${Number(m[1]) === 1 ? 'entry' : 'entries'}`;
  if (/^must match pattern/.test(reason))
    return KEY_LIKE.test(field)
      ? 'Use letters, digits, dots, dashes and underscores, starting and ending with a letter or a digit'
      : 'This value has characters that are not allowed here';
  if ((m = reason.match(/^must match format "(\w+)"$/))) {
    const format = m[1];
    if (format === 'uri' || format === 'url') return 'Enter a full address such as https://example.com/path';
    if (format === 'email') return 'Enter an e-mail address such as ada@example.com';
    if (format === 'date-time') return 'Enter a date and time';
    return `Enter a valid ${format}`;
  }
  if ((m = reason.match(/^must be (string|number|integer|boolean|object|array|null)(,null)?$/))) {
    const kinds: Record<string, string> = {
      string: 'text',
      number: 'a number',
      integer: 'a whole number',
      boolean: 'on or off',
      object: 'a JSON object',
      array: 'a list',
      null: 'empty',
    };
    return `Must be ${kinds[m[1]!]}${m[2] ? ' or empty' : ''}`;
  }
  if ((m = reason.match(/^must be (>=|<=|>|<) (-?[\d.]+)$/))) {
    const words: Record<string, string> = { '>=': 'at least', '<=': 'at most', '>': 'more than', '<': 'less than' };
    return `Must be ${words[m[1]!]} ${m[2]}`;
  }
  if (/^must be equal to one of the allowed values$/.test(reason)) return 'Choose one of the offered values';
  if ((m = reason.match(/^must have required property '(.+)'$/))) return `${fieldLabel(m[1]!)} is required`;
  if (/^must NOT have additional properties$/.test(reason)) return 'Has a setting this version does not know';
  return reason;
}

/**
 * A nullable setting (`anyOf: [schema, null]`) that fails its schema is also reported as "must be null" and
 * "must match a schema in anyOf" at its own path: noise when a problem at or below that path says what is wrong.
 */
const ANY_OF_NOISE = /^(must be null|must match a schema in anyOf)$/;

/** The problems of a refused request with `body.` taken off and the reasons in words. */
export function humanProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiError)) return [];
  const said = (field: string) => error.details.some((d) => !ANY_OF_NOISE.test(d.reason) && (d.field === field || d.field.startsWith(`${field}.`)));
  return error.details
    .filter((d) => !(ANY_OF_NOISE.test(d.reason) && said(d.field)))
    .map((d) => ({ field: d.field.replace(/^(body|query|params)\./, ''), reason: humanReason(d.field, d.reason) }));
}

/** A one-line summary of any failure, for a toast. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 0) return error.message;
    const problems = humanProblems(error);
    if (problems.length > 0) return problems.map((p) => `${fieldLabel(p.field)}: ${p.reason}`).join('; ');
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
