import type { FieldProblem, Rule, Split } from '../api.ts';
import { type ConditionDraft, fromDraft, toDraft } from './conditions.ts';

// A rule being edited, and its way back to the API's shape. Percentages of a split become integer
// weights; a split left untouched keeps its weights as they were (the same users stay in each bucket).

export const CURRENT_BUCKETING: Bucketing = 'flagd-fractional-v2';
type Bucketing = NonNullable<Split['bucketing']>;

export interface SplitDraft {
  bucketBy: string;
  bucketing: Bucketing;
  /** Variants in the split's order, each with its percentage as typed. */
  rows: Array<{ variant: string; percent: string }>;
  /** The weights as loaded: sent back as they are while no percentage was edited. */
  original?: Split;
  touched: boolean;
}

export interface RuleDraft {
  /** Local identity (rules move). */
  key: number;
  id?: string;
  name: string;
  enabled: boolean;
  conditions: ConditionDraft[];
  segments: string[];
  serve: 'variant' | 'split';
  variant: string;
  split: SplitDraft;
}

let nextKey = 1;

const round2 = (n: number) => Math.round(n * 100) / 100;

/** 100 % in `n` even parts of at most two decimals that add up to 100 (the last takes the rest): 50/50, 33.33/33.33/33.34. */
export function evenPercents(n: number): number[] {
  if (n <= 0) return [];
  const part = Math.floor(10_000 / n) / 100;
  return Array.from({ length: n }, (_, i) => (i < n - 1 ? part : round2(100 - part * (n - 1))));
}

/**
 * Split rows for every variant: the split's own in its order first, then the others at 0 %. Without a
 * split yet, an even one (issue 31 item 9: a new split starts valid, not at 0 % each).
 */
export function splitRows(variantNames: string[], split?: Split): SplitDraft['rows'] {
  if (!split) {
    const even = evenPercents(variantNames.length);
    return variantNames.map((variant, i) => ({ variant, percent: String(even[i]) }));
  }
  const total = split.weights.reduce((s, w) => s + w.weight, 0);
  const rows = split.weights.map((w) => ({ variant: w.variant, percent: String(total > 0 ? round2((w.weight * 100) / total) : 0) }));
  for (const name of variantNames) if (!rows.some((r) => r.variant === name)) rows.push({ variant: name, percent: '0' });
  return rows;
}

/** A stored rule as a draft (the API's defaults where a field is absent: enabled, no name, no conditions). */
export function toRuleDraft(rule: Rule, variantNames: string[]): RuleDraft {
  const split = rule.serve.split;
  return {
    key: nextKey++,
    id: rule.id,
    name: rule.name ?? '',
    enabled: rule.enabled ?? true,
    conditions: (rule.conditions ?? []).map(toDraft),
    segments: [...(rule.segments ?? [])],
    serve: split ? 'split' : 'variant',
    variant: rule.serve.variant ?? variantNames[0] ?? '',
    split: {
      bucketBy: split?.bucketBy ?? '',
      bucketing: split?.bucketing ?? CURRENT_BUCKETING,
      rows: splitRows(variantNames, split),
      original: split,
      touched: false,
    },
  };
}

export function emptyRule(variantNames: string[]): RuleDraft {
  return {
    key: nextKey++,
    name: '',
    enabled: true,
    conditions: [],
    segments: [],
    serve: 'variant',
    variant: variantNames[0] ?? '',
    split: { bucketBy: '', bucketing: CURRENT_BUCKETING, rows: splitRows(variantNames), touched: true },
  };
}

/** The sum of a split's percentages, or undefined while one is not a number. */
export function percentTotal(rows: SplitDraft['rows']): number | undefined {
  let total = 0;
  for (const r of rows) {
    if (r.percent.trim() === '') continue;
    const n = Number(r.percent);
    if (!Number.isFinite(n)) return undefined;
    total += n;
  }
  return round2(total);
}

function splitOf(d: SplitDraft, at: string, problems: FieldProblem[]): Split {
  const bucketBy = d.bucketBy.trim();
  const base: Split = { bucketing: d.bucketing, weights: [] };
  if (bucketBy !== '') base.bucketBy = bucketBy;
  if (!d.touched && d.original) return { ...base, weights: d.original.weights };
  const percents = d.rows.map((r) => (r.percent.trim() === '' ? 0 : Number(r.percent)));
  d.rows.forEach((r, i) => {
    const n = percents[i]!;
    if (!Number.isFinite(n) || n < 0 || n > 100) problems.push({ field: `${at}.weights.${i}.weight`, reason: `${r.variant}: a percentage from 0 to 100` });
    else if (round2(n) !== n) problems.push({ field: `${at}.weights.${i}.weight`, reason: `${r.variant}: at most two decimals` });
  });
  const total = percentTotal(d.rows);
  if (total !== 100) problems.push({ field: `${at}.weights`, reason: `The percentages add up to ${total ?? '?'} %, not 100 %` });
  // Whole percentages are the weights themselves; with decimals, hundredths of a percent.
  const scale = percents.every((n) => Number.isInteger(n)) ? 1 : 100;
  return { ...base, weights: d.rows.map((r, i) => ({ variant: r.variant, weight: Math.round((percents[i] ?? 0) * scale) })) };
}

/** The rule to send (at position `index`), with the problems found on the way. */
export function fromRuleDraft(d: RuleDraft, index: number, problems: FieldProblem[]): Rule {
  const at = `rules.${index}`;
  const conditions = d.conditions.flatMap((c, i) => {
    const r = fromDraft(c);
    if (r.problem !== undefined) {
      problems.push({ field: `${at}.conditions.${i}.values`, reason: r.problem });
      return [];
    }
    if (r.condition.attribute === '')
      problems.push({ field: `${at}.conditions.${i}.attribute`, reason: 'Enter the attribute (a dot path such as user.country)' });
    return [r.condition];
  });
  const rule: Rule = {
    name: d.name.trim(),
    enabled: d.enabled,
    conditions,
    segments: d.segments,
    serve: d.serve === 'variant' ? { variant: d.variant } : { split: splitOf(d.split, `${at}.serve.split`, problems) },
  };
  if (d.id !== undefined) rule.id = d.id;
  return rule;
}

/** The rules after a variant is renamed or removed (`to` undefined): served variants and split rows follow. */
export function followVariant(rules: RuleDraft[], from: string, to: string | undefined): RuleDraft[] {
  const rename = (name: string) => (name === from ? to : name);
  return rules.map((r) => {
    const rows = r.split.rows.flatMap((row) => {
      const variant = rename(row.variant);
      return variant === undefined ? [] : [{ ...row, variant }];
    });
    const original = r.split.original && {
      ...r.split.original,
      weights: r.split.original.weights.flatMap((w) => {
        const variant = rename(w.variant);
        return variant === undefined ? [] : [{ ...w, variant }];
      }),
    };
    // Taking away a variant that had users changes the split: the percentages left must be checked.
    const lostUsers = to === undefined && (r.split.original?.weights.some((w) => w.variant === from && w.weight > 0) ?? false);
    return {
      ...r,
      variant: r.variant === from ? (to ?? '') : r.variant,
      split: { ...r.split, rows, original, touched: r.split.touched || lostUsers },
    };
  });
}

/** Rules after a variant is added: it joins every split at 0 %. */
export function addVariantToSplits(rules: RuleDraft[], name: string): RuleDraft[] {
  return rules.map((r) =>
    r.split.rows.some((row) => row.variant === name) ? r : { ...r, split: { ...r.split, rows: [...r.split.rows, { variant: name, percent: '0' }] } },
  );
}
