import { Liquid, type Template } from 'liquidjs';

// The templates of a form's e-mails (issue 34, docs/adr/0048-form-mail-templates-and-deliveries.md):
// Liquid (liquidjs), with the submission's fields as variables (`New message from {{ name }}`).
// Configured strict and safe: an unknown filter is an error when the template is saved, a field a
// submission lacks renders as nothing, only own properties are read, nothing is read from the file system
// (`include`, `render` and `layout` are refused), and parsing and rendering are bounded. HTML templates
// escape every value they print; one-line templates (subject, sender name) lose line breaks and controls,
// so a value cannot start a header of its own.

const LIMITS = { parseLimit: 20_000, renderLimit: 1_000, memoryLimit: 20_000_000 };
/** Characters of a template, at most (the admin API's limit too). */
export const MAX_TEMPLATE_LENGTH = 20_000;

function engine(escape: boolean): Liquid {
  const liquid = new Liquid({
    strictFilters: true,
    strictVariables: false,
    ownPropertyOnly: true,
    // In-memory templates only, and none: a template can never read a file.
    templates: {},
    ...LIMITS,
    ...(escape ? { outputEscape: 'escape' as const } : {}),
  });
  for (const tag of ['include', 'render', 'layout']) {
    liquid.registerTag(tag, {
      parse() {
        throw new Error(`the ${tag} tag is not available`);
      },
      render() {},
    });
  }
  return liquid;
}

const html = engine(true);
const plain = engine(false);

/** Parsed templates by engine and source; a few hundred forms' templates at most. */
const parsed = new Map<string, Template[]>();
const MAX_PARSED = 500;

function parse(liquid: Liquid, source: string): Template[] {
  const key = `${liquid === html ? 'h' : 'p'}:${source}`;
  let templates = parsed.get(key);
  if (!templates) {
    templates = liquid.parse(source);
    if (parsed.size >= MAX_PARSED) parsed.delete(parsed.keys().next().value!);
    parsed.set(key, templates);
  }
  return templates;
}

/** Why a template cannot be used (its parse error), or undefined when it can. */
export function templateProblem(source: string): string | undefined {
  if (source.length > MAX_TEMPLATE_LENGTH) return `longer than ${MAX_TEMPLATE_LENGTH} characters`;
  try {
    parse(plain, source);
    return undefined;
  } catch (error) {
    return `is not a valid template: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200)}`;
  }
}

/** Line breaks, and the other controls that could start a new line or hide text in a mail client. */
const LINE_BREAKS = /\r\n|[\r\n\v\f\u0085\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex -- these control characters are what it removes
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text on one line: breaks become spaces, controls go, runs of spaces are one. */
export const oneLine = (text: string): string => text.replace(LINE_BREAKS, ' ').replace(CONTROLS, '').replace(/ {2,}/g, ' ').trim();

/** The variables of a template: the fields, repeated ones joined (`a, b`), other values as JSON. */
export function templateVariables(data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(data)) {
    out[name] =
      typeof value === 'string'
        ? value
        : Array.isArray(value)
          ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')
          : JSON.stringify(value);
  }
  return out;
}

/**
 * A one-line template (subject, sender name) rendered with `variables`, at most `max` characters; the
 * `fallback` when it fails or renders empty.
 */
export function renderLine(source: string, variables: Record<string, unknown>, fallback: string, max = 200): string {
  try {
    const text = oneLine(String(plain.renderSync(parse(plain, source), variables)));
    return text === '' ? fallback : text.slice(0, max);
  } catch {
    return fallback;
  }
}

/** An HTML template rendered with `variables`, every printed value escaped; undefined when it fails. */
export function renderHtml(source: string, variables: Record<string, unknown>): string | undefined {
  try {
    return String(html.renderSync(parse(html, source), variables));
  } catch {
    return undefined;
  }
}
