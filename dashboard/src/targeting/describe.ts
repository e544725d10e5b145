import type { Condition, Prerequisite, Rule, Serve } from '../api.ts';
import { describeCondition } from './conditions.ts';

// Targeting changes in words, as the rules editor shows them (issue 31 item 3): what a change request,
// the history and the comparison of environments say a change does to rules, variants, prerequisites and
// a segment's conditions, one line each ("added rule Staff: email ends with @example.com → on").

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** A value in a line: strings as they are, the rest as compact JSON. */
const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

const round = (n: number) => Math.round(n * 10) / 10;

/** "90 s", "30 min", "2 h", "3 d". */
export function durationText(seconds: number): string {
  if (seconds > 0 && seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds > 0 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds > 0 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/**
 * A value of the history that is not targeting but would read as JSON, in words (found on the walk through
 * the screens, issue 31): an experiment's split ("50/50 (a/b)"), a release's steps ("5 % for 1 h, 25 %
 * for 2 h after an approval, 100 %") and guardrails. Undefined for anything else.
 */
export function valueInWords(field: string, value: unknown): string | undefined {
  const name = field.split('.').pop();
  if (name === 'split' && isObject(value) && Array.isArray(value.weights)) {
    return serveText({ split: value as unknown as NonNullable<Serve['split']> }).replace(/^split /, '');
  }
  if (name === 'steps' && Array.isArray(value) && value.every((s) => isObject(s) && typeof s.percent === 'number')) {
    return (value as Array<{ percent: number; holdSeconds?: number; approval?: boolean }>)
      .map((s) => `${s.percent} %${s.holdSeconds ? ` for ${durationText(s.holdSeconds)}` : ''}${s.approval ? ' after an approval' : ''}`)
      .join(', ');
  }
  if (name === 'guardrails' && Array.isArray(value) && value.every(isObject)) {
    if (value.length === 0) return 'none';
    return (value as Array<Record<string, unknown>>)
      .map((g) => {
        const prometheus = g.prometheus;
        if (isObject(prometheus)) return `Prometheus ${valueText(prometheus.query)} above ${valueText(prometheus.above)}`;
        return typeof g.metric === 'string' ? `metric ${g.metric}${typeof g.minUsers === 'number' ? ` (from ${g.minUsers} users an arm)` : ''}` : valueText(g);
      })
      .join(', ');
  }
  return undefined;
}

/** "on", or "split 50/50 (on/off)". */
export function serveText(serve: Serve | undefined): string {
  if (!serve) return 'nothing';
  if (serve.split) {
    const total = serve.split.weights.reduce((sum, w) => sum + w.weight, 0);
    const percents = serve.split.weights.map((w) => (total > 0 ? round((w.weight * 100) / total) : 0));
    return `split ${percents.join('/')} (${serve.split.weights.map((w) => w.variant).join('/')})`;
  }
  return serve.variant ?? 'nothing';
}

const ruleName = (rule: Rule, index: number) => rule.name || `Rule ${index + 1}`;

/** Who a rule is for: its conditions and segments, "everyone" without either. */
function audience(rule: Rule): string {
  const parts = [...(rule.conditions ?? []).map((c) => describeCondition(c)), ...(rule.segments ?? []).map((s) => `in segment ${s}`)];
  return parts.length === 0 ? 'everyone' : parts.join(' and ');
}

/** "Staff: email ends with @example.com → on", "(switched off)" when it is. */
export function describeRule(rule: Rule, index: number): string {
  return `${ruleName(rule, index)}: ${audience(rule)} → ${serveText(rule.serve)}${rule.enabled === false ? ' (switched off)' : ''}`;
}

/** A change of what a rule serves: "split 50/50 → 25/75 (on/off)" when only the weights moved. */
function serveChange(before: Serve, after: Serve): string {
  const variantsOf = (s: Serve) => s.split?.weights.map((w) => w.variant).join('/');
  if (before.split && after.split && variantsOf(before) === variantsOf(after)) {
    const cut = (s: Serve) => serveText(s).replace(/ \(.*\)$/, '');
    if (cut(before) !== cut(after)) return `${cut(before)} → ${cut(after).replace(/^split /, '')} (${variantsOf(after)})`;
    return `split by ${before.split.bucketBy ?? 'targetingKey'} → ${after.split.bucketBy ?? 'targetingKey'}`;
  }
  return `${serveText(before)} → ${serveText(after)}`;
}

/** How a list of rules became another, one line per rule added, removed or changed (rules are matched by id). */
export function ruleChanges(before: readonly Rule[], after: readonly Rule[]): string[] {
  const keyOf = (rule: Rule, index: number) => rule.id ?? `#${index}`;
  const beforeKeys = before.map(keyOf);
  const afterKeys = after.map(keyOf);
  const lines: string[] = [];
  before.forEach((rule, i) => {
    if (!afterKeys.includes(keyOf(rule, i))) lines.push(`removed rule ${describeRule(rule, i)}`);
  });
  after.forEach((rule, i) => {
    const at = beforeKeys.indexOf(keyOf(rule, i));
    if (at === -1) {
      lines.push(`added rule ${describeRule(rule, i)}`);
      return;
    }
    const old = before[at]!;
    if (same(old, rule)) return;
    const name = ruleName(rule, i);
    if ((old.name ?? '') !== (rule.name ?? '')) lines.push(`renamed rule ${ruleName(old, at)} → ${name}`);
    if ((old.enabled ?? true) !== (rule.enabled ?? true)) lines.push(`switched rule ${name} ${rule.enabled === false ? 'off' : 'on'}`);
    if (audience(old) !== audience(rule)) lines.push(`rule ${name}: ${audience(old)} → ${audience(rule)}`);
    if (!same(old.serve, rule.serve)) lines.push(`rule ${name}: ${serveChange(old.serve, rule.serve)}`);
  });
  const kept = afterKeys.filter((k) => beforeKeys.includes(k));
  const keptBefore = beforeKeys.filter((k) => afterKeys.includes(k));
  if (!same(kept, keptBefore)) lines.push(`rules in the order ${after.map((r, i) => ruleName(r, i)).join(', ')}`);
  return lines;
}

/** Variants (name → value) added, removed or given another value. */
export function variantChanges(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(before)) if (!(name in after)) lines.push(`removed variant ${name} (${valueText(value)})`);
  for (const [name, value] of Object.entries(after)) {
    if (!(name in before)) lines.push(`added variant ${name} = ${valueText(value)}`);
    else if (!same(before[name], value)) lines.push(`variant ${name}: ${valueText(before[name])} → ${valueText(value)}`);
  }
  return lines;
}

const prerequisiteText = (p: Prerequisite) => `${p.flag} serves ${p.variants.join(' or ')}`;

export function prerequisiteChanges(before: readonly Prerequisite[], after: readonly Prerequisite[]): string[] {
  const lines: string[] = [];
  for (const p of before) if (!after.some((q) => q.flag === p.flag)) lines.push(`removed prerequisite ${prerequisiteText(p)}`);
  for (const p of after) {
    const old = before.find((q) => q.flag === p.flag);
    if (!old) lines.push(`added prerequisite ${prerequisiteText(p)}`);
    else if (!same(old, p)) lines.push(`prerequisite ${prerequisiteText(old)} → ${prerequisiteText(p)}`);
  }
  return lines;
}

/** A segment's conditions added and removed. */
export function conditionChanges(before: readonly Condition[], after: readonly Condition[]): string[] {
  const was = before.map((c) => describeCondition(c));
  const now = after.map((c) => describeCondition(c));
  return [
    ...was.filter((c) => !now.includes(c)).map((c) => `removed condition ${c}`),
    ...now.filter((c) => !was.includes(c)).map((c) => `added condition ${c}`),
  ];
}

const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/**
 * One field's change in words, one line each, for the fields the rules editor edits; undefined for any
 * other field (shown as before → after). `before` undefined: the field was set (a creation).
 */
export function changeInWords(field: string, before: unknown, after: unknown): string[] | undefined {
  const name = field.split('.').pop();
  switch (name) {
    case 'rules':
      return ruleChanges(list<Rule>(before), list<Rule>(after));
    case 'prerequisites':
      return prerequisiteChanges(list<Prerequisite>(before), list<Prerequisite>(after));
    case 'conditions':
      return conditionChanges(list<Condition>(before), list<Condition>(after));
    case 'variants':
      return isObject(before) || isObject(after) ? variantChanges(isObject(before) ? before : {}, isObject(after) ? after : {}) : undefined;
    default:
      return undefined;
  }
}
