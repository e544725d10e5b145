import type { CodeReferenceRemoval, StoredCodeReference } from './code-ref.ts';

/** Why a flag is in the report; a flag is listed when at least one rule matches. */
export type StaleRule = 'expired_but_referenced' | 'unreferenced' | 'unchanged';

/** What the report needs of a flag: its value in each environment (the admin API's flag listing). */
export interface FlagAcrossEnvironments {
  slug: string;
  environments: Array<{ environment: { key: string; name: string }; enabled: boolean; expiredAt: string | null; description: string; updatedAt: string }>;
}

export interface StaleFlag {
  slug: string;
  description: string;
  rules: StaleRule[];
  /** The latest change of the flag in any environment. */
  lastChangedAt: string;
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
  /** False while no code reference was ever uploaded: `unreferenced` is then not applied (it would match every flag). */
  codeRefsUploaded: boolean;
  flags: StaleFlag[];
}

const DAY_MS = 86_400_000;

/**
 * The stale-flag rules of issue 11, in one pure function:
 * - `expired_but_referenced`: the expiry date passed in at least one environment and code still references the slug;
 * - `unreferenced`: no branch references the slug (only once the project has received code references);
 * - `unchanged`: no environment of the flag changed for `unchangedDays` days.
 */
export function staleFlags(input: {
  flags: FlagAcrossEnvironments[];
  references: StoredCodeReference[];
  removals: CodeReferenceRemoval[];
  codeRefsUploaded: boolean;
  unchangedDays: number;
  now: Date;
}): StaleReport {
  const now = input.now.getTime();
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
    const rules: StaleRule[] = [];
    if (expiredIn.length > 0 && references.length > 0) rules.push('expired_but_referenced');
    if (input.codeRefsUploaded && references.length === 0) rules.push('unreferenced');
    if (lastChangedAt !== '' && now - Date.parse(lastChangedAt) >= input.unchangedDays * DAY_MS) rules.push('unchanged');
    if (rules.length === 0) continue;
    const removedFromCodeAt =
      references.length === 0 && removals.length > 0 ? removals.reduce((latest, r) => (r.removedAt > latest ? r.removedAt : latest), '') : null;
    flags.push({
      slug: flag.slug,
      description: flag.environments[0]?.description ?? '',
      rules,
      lastChangedAt,
      expiredIn,
      removedFromCodeAt,
      references,
      removals,
    });
  }
  return { generatedAt: input.now.toISOString(), unchangedDays: input.unchangedDays, codeRefsUploaded: input.codeRefsUploaded, flags };
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
