import type { CodeReferenceRemoval, StoredCodeReference } from './code-ref.ts';

/** Why a flag is in the report; a flag is listed when at least one rule matches. */
export type StaleRule = 'expired_but_referenced' | 'unreferenced' | 'unchanged' | 'not_evaluated';

/** What the report needs of a flag: its value in each environment (the admin API's flag listing). */
export interface FlagAcrossEnvironments {
  slug: string;
  environments: Array<{
    environment: { key: string; name: string };
    enabled: boolean;
    expiredAt: string | null;
    description: string;
    createdAt: string;
    updatedAt: string;
    /** The latest evaluation counted in this environment (flag usage), null when none is kept. */
    lastEvaluatedAt: string | null;
  }>;
}

export interface StaleFlag {
  slug: string;
  description: string;
  rules: StaleRule[];
  /** `not_evaluated` and `unreferenced` together: nothing reads the flag and no code names it. */
  removable: boolean;
  /** The latest change of the flag in any environment. */
  lastChangedAt: string;
  /** The latest evaluation in any environment, null when none is kept. */
  lastEvaluatedAt: string | null;
  /** The environments whose expiry date has passed. */
  expiredIn: Array<{ key: string; name: string; expiredAt: string }>;
  /** When the flag's last reference disappeared from code; null while code still uses it or nothing was recorded. */
  removedFromCodeAt: string | null;
  references: StoredCodeReference[];
  removals: CodeReferenceRemoval[];
}

export interface StaleReport {
  generatedAt: string;
  unchangedDays: number;
  unevaluatedDays: number;
  /** When evaluations began to be counted; `not_evaluated` waits until this is `unevaluatedDays` old. */
  usageCountedSince: string | null;
  /** False while no code reference was ever uploaded: `unreferenced` is then not applied (it would match every flag). */
  codeRefsUploaded: boolean;
  flags: StaleFlag[];
}

const DAY_MS = 86_400_000;

/**
 * The stale-flag rules of issue 11, in one pure function:
 * - `expired_but_referenced`: the expiry date passed in at least one environment and code still references the slug;
 * - `unreferenced`: no branch references the slug (only once the project has received code references);
 * - `unchanged`: no environment of the flag changed for `unchangedDays` days;
 * - `not_evaluated` (issue 23): no client evaluated the flag in any environment for `unevaluatedDays`
 *   days, for a flag at least that old, once evaluations have been counted for that long.
 * A flag both `not_evaluated` and `unreferenced` is `removable`.
 */
export function staleFlags(input: {
  flags: FlagAcrossEnvironments[];
  references: StoredCodeReference[];
  removals: CodeReferenceRemoval[];
  codeRefsUploaded: boolean;
  unchangedDays: number;
  unevaluatedDays: number;
  usageCountedSince: string | null;
  now: Date;
}): StaleReport {
  const now = input.now.getTime();
  const unevaluatedSince = now - input.unevaluatedDays * DAY_MS;
  const usageLongEnough = input.usageCountedSince !== null && Date.parse(input.usageCountedSince) <= unevaluatedSince;
  const refsBySlug = group(input.references);
  const removalsBySlug = group(input.removals);
  const flags: StaleFlag[] = [];
  for (const flag of input.flags) {
    const references = refsBySlug.get(flag.slug) ?? [];
    const removals = removalsBySlug.get(flag.slug) ?? [];
    const expiredIn = flag.environments
      .filter((e) => e.expiredAt !== null && Date.parse(e.expiredAt) <= now)
      .map((e) => ({ key: e.environment.key, name: e.environment.name, expiredAt: e.expiredAt! }));
    const lastChangedAt = flag.environments.reduce((latest, e) => (e.updatedAt > latest ? e.updatedAt : latest), '');
    const lastEvaluatedAt = flag.environments.reduce<string | null>(
      (latest, e) => (e.lastEvaluatedAt !== null && (latest === null || e.lastEvaluatedAt > latest) ? e.lastEvaluatedAt : latest),
      null,
    );
    const createdAt = flag.environments.reduce((first, e) => (first === '' || e.createdAt < first ? e.createdAt : first), '');
    const rules: StaleRule[] = [];
    if (expiredIn.length > 0 && references.length > 0) rules.push('expired_but_referenced');
    if (input.codeRefsUploaded && references.length === 0) rules.push('unreferenced');
    if (lastChangedAt !== '' && now - Date.parse(lastChangedAt) >= input.unchangedDays * DAY_MS) rules.push('unchanged');
    if (
      usageLongEnough &&
      createdAt !== '' &&
      Date.parse(createdAt) <= unevaluatedSince &&
      (lastEvaluatedAt === null || Date.parse(lastEvaluatedAt) <= unevaluatedSince)
    ) {
      rules.push('not_evaluated');
    }
    if (rules.length === 0) continue;
    const removedFromCodeAt =
      references.length === 0 && removals.length > 0 ? removals.reduce((latest, r) => (r.removedAt > latest ? r.removedAt : latest), '') : null;
    flags.push({
      slug: flag.slug,
      description: flag.environments[0]?.description ?? '',
      rules,
      removable: rules.includes('not_evaluated') && rules.includes('unreferenced'),
      lastChangedAt,
      lastEvaluatedAt,
      expiredIn,
      removedFromCodeAt,
      references,
      removals,
    });
  }
  return {
    generatedAt: input.now.toISOString(),
    unchangedDays: input.unchangedDays,
    unevaluatedDays: input.unevaluatedDays,
    usageCountedSince: input.usageCountedSince,
    codeRefsUploaded: input.codeRefsUploaded,
    flags,
  };
}

function group<T extends { slug: string }>(items: T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const list = map.get(item.slug);
    if (list) list.push(item);
    else map.set(item.slug, [item]);
  }
  return map;
}
