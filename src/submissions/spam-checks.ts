import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import type { SpamChecks } from '../forms/index.ts';
import { type CompiledEnvironment, compileEnvironment, type TargetedFlag } from '../targeting/index.ts';
import type { SpamReason } from './submission.ts';

// The spam checks of a form beside honeypot and CAPTCHA (issue 34, docs/adr/0046-spam-checks.md). The
// pure parts live here; the checks that count earlier submissions (duplicates, rate limit) ask the store.
// A verdict keeps every reason, so the inbox can say why.

/** Default window of the duplicate check, in minutes. */
export const DUPLICATE_WINDOW_MINUTES = 60;
/** The window of the per-form rate limit. */
export const RATE_WINDOW_SECONDS = 60;
/** The hidden field the form snippet fills with a signed render timestamp. */
export const RENDER_FIELD = '_flagpost_rendered';

/**
 * The fingerprint of a submission's fields for the duplicate check: names sorted, text trimmed, spaces
 * collapsed and case-folded, so that re-sending the same message with other spacing is still a duplicate.
 */
export function fingerprintOf(data: Record<string, unknown>): string {
  const normal = (value: unknown): unknown =>
    typeof value === 'string' ? value.trim().replace(/\s+/g, ' ').toLowerCase() : Array.isArray(value) ? value.map(normal) : value;
  const entries = Object.keys(data)
    .sort()
    .map((name) => [name, normal(data[name])]);
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url');
}

/** A render timestamp signed by this Flagpost: `<ms since the epoch>.<signature>` (the form snippet's token). */
export function renderToken(key: Buffer, formKey: string, atMs: number): string {
  return `${atMs}.${sign(key, formKey, atMs)}`;
}

/** The time in a render token of this form, when its signature holds; undefined otherwise. */
export function renderedAt(key: Buffer, formKey: string, token: unknown): number | undefined {
  if (typeof token !== 'string' || token.length > 100) return undefined;
  const match = /^(\d{1,15})\.([A-Za-z0-9_-]{20,64})$/.exec(token);
  if (!match) return undefined;
  const at = Number(match[1]);
  const expected = Buffer.from(sign(key, formKey, at));
  const given = Buffer.from(match[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? at : undefined;
}

const sign = (key: Buffer, formKey: string, atMs: number) => createHmac('sha256', key).update(`render\n${formKey}\n${atMs}`).digest('base64url').slice(0, 32);

/** The minimum fill time: spam when the form was sent sooner after it was rendered, or when nobody said when that was. */
export function fillTimeReason(minFillSeconds: number, loadedAtMs: number | undefined, nowMs: number): SpamReason | undefined {
  if (loadedAtMs === undefined) return { check: 'minFillTime', detail: 'no render timestamp (the form snippet or Formspree-Session-Data)' };
  const seconds = (nowMs - loadedAtMs) / 1000;
  if (seconds < minFillSeconds)
    return { check: 'minFillTime', detail: `sent ${Math.max(0, seconds).toFixed(1)} s after the form was rendered (at least ${minFillSeconds} s)` };
  return undefined;
}

const EMAIL = /^[^\s@<>(),;:"]+@([^\s@<>(),;:"]+\.[^\s@<>(),;:"]+)$/;

/** The package's list as one Set, built on first use (its own lookup builds a new Set of every domain per call). */
let disposableDomains: Set<string> | undefined;
const isDisposableDomain = (domain: string) => (disposableDomains ??= disposableEmailBlocklistSet()).has(domain);

/** The first field holding an e-mail address on a disposable domain. */
export function disposableReason(data: Record<string, unknown>): SpamReason | undefined {
  for (const [name, value] of Object.entries(data)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (typeof one !== 'string' || one.length > 254) continue;
      const domain = EMAIL.exec(one.trim())?.[1];
      if (domain && isDisposableDomain(domain.toLowerCase()))
        return { check: 'disposableEmail', detail: `${name.slice(0, 100)}: ${domain.slice(0, 100)} is a disposable e-mail domain` };
    }
  }
  return undefined;
}

/** What the rules see: the fields, and the request under `request` (`request.ip`, `request.origin`, `request.userAgent`). */
export function ruleContext(
  data: Record<string, unknown>,
  meta: { ip: string | null; origin: string | null; userAgent: string | null },
): Record<string, unknown> {
  return { ...data, request: { ip: meta.ip ?? '', origin: meta.origin ?? '', userAgent: meta.userAgent ?? '' } };
}

const RULES_FLAG = 'spam';
const HANDED_OVER = Object.freeze({ parsed: true });
const compiledRules = new Map<string, CompiledEnvironment>();

/** The rules as one flag of the targeting engine: each condition a rule serving `on`; the first that holds is the reason. */
/** The compiled rules of a rules list seen before (a form's settings are parsed once per text, form.store.ts). */
const rulesByIdentity = new WeakMap<object, CompiledEnvironment>();

function rulesEnvironment(rules: NonNullable<SpamChecks['rules']>): CompiledEnvironment {
  const known = rulesByIdentity.get(rules);
  if (known) return known;
  const key = JSON.stringify(rules);
  const found = compiledRules.get(key);
  if (found) {
    rulesByIdentity.set(rules, found);
    return found;
  }
  const flag: TargetedFlag = {
    key: RULES_FLAG,
    type: 'boolean',
    targeting: {
      state: 'ENABLED',
      variants: { on: true, off: false },
      defaultVariant: 'off',
      prerequisites: [],
      rules: rules.map((condition, i) => ({
        id: String(i),
        name: `rule ${i}`,
        enabled: true,
        conditions: [condition],
        segments: [],
        serve: { variant: 'on' },
      })),
    },
  };
  const env = compileEnvironment([flag], []);
  if (compiledRules.size >= 500) compiledRules.delete(compiledRules.keys().next().value!);
  compiledRules.set(key, env);
  rulesByIdentity.set(rules, env);
  return env;
}

/** The first of the form's rules that holds for this submission. */
export function ruleReason(rules: NonNullable<SpamChecks['rules']>, context: Record<string, unknown>): SpamReason | undefined {
  if (rules.length === 0) return undefined;
  // The context is ruleContext's fresh object over the parsed fields, which nothing changes: the engine
  // checks it and uses it as it is unless it holds a key it drops (then it copies).
  const evaluation = rulesEnvironment(rules).evaluate(RULES_FLAG, context, HANDED_OVER);
  if (evaluation?.value !== true) return undefined;
  const index = Number(evaluation.metadata.ruleId);
  const rule = rules[index]!;
  const operands = rule.values.map((v) => JSON.stringify(v)).join(', ');
  return { check: 'rule', detail: `rule ${index + 1}: ${rule.attribute} ${rule.negate ? 'not ' : ''}${rule.operator} ${operands}`.slice(0, 300) };
}
