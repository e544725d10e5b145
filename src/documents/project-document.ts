import type { Project } from '../projects/index.ts';
import type { FlagTargeting, FlagType, Prerequisite, Rule, Segment, Variants } from '../targeting/index.ts';
import { type Flag, normalizeDate, normalizeRules, type RuleInput, ruleInputProblems } from '../flags/index.ts';

// Flags as code (issue 21): a project as one readable document that lives in git. Pure: building the
// document from what is stored, reading one back into full values, and the plan that makes a project
// match a document. Environments are named by name (their keys are per-instance client credentials, and
// a document applied to another instance must give the same document back); flags by slug, segments by
// key. Fields that hold their default are left out, so that a document shows what was configured.

export const DOCUMENT_VERSION = 1;

/** A flag's configuration in one environment, as a document spells it (defaults left out). */
export interface DocumentFlagEnvironment {
  state?: 'DISABLED';
  variants: Variants;
  defaultVariant: string | null;
  /** As stored when exported; a document may leave out a rule's id (then `rule-<position>`) and defaults. */
  rules?: Array<Rule | RuleInput>;
  prerequisites?: Prerequisite[];
  jsonLogic?: unknown;
  metadata?: Record<string, string | number | boolean>;
  description?: string;
  payload?: Record<string, unknown>;
  expiredAt?: string;
  /** Present for a preview flag: its name and TipTap content. */
  preview?: { name: string | null; content: unknown };
}

export interface DocumentFlag {
  type: FlagType;
  /** One entry per environment of the document, in its order. */
  environments: Record<string, DocumentFlagEnvironment>;
}

export interface DocumentSegment {
  name: string;
  description?: string;
  match: Segment['match'];
  conditions: Segment['conditions'];
}

/** A form's settings as a document writes them (forms/form-document.ts: defaults left out, secrets as `$NAME` references). */
export type DocumentFormEntry = Record<string, unknown> & { name: string };

export interface ProjectDocument {
  version: typeof DOCUMENT_VERSION;
  project: string;
  environments: string[];
  segments: Record<string, DocumentSegment>;
  flags: Record<string, DocumentFlag>;
  /** The project's forms by key (issue 34); absent: a document that leaves forms alone. */
  forms?: Record<string, DocumentFormEntry>;
}

/** Everything of a flag in one environment that a document carries, with defaults filled in. */
export interface FlagSettings {
  targeting: FlagTargeting;
  description: string;
  payload: Record<string, unknown> | null;
  expiredAt: string | null;
  isPreview: boolean;
  previewName: string | null;
  previewContent: unknown;
}

const byKey = <T>(entries: Iterable<[string, T]>): Record<string, T> => Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export function settingsOf(flag: Flag): FlagSettings {
  return {
    targeting: flag.targeting,
    description: flag.description,
    payload: flag.payload,
    expiredAt: flag.expiredAt,
    isPreview: flag.isPreview,
    previewName: flag.previewName,
    previewContent: flag.previewContent ?? null,
  };
}

/** A flag's settings as a document writes them. Key order is fixed, so that re-exports are identical. */
export function documentFlagEnvironment(s: FlagSettings): DocumentFlagEnvironment {
  const t = s.targeting;
  const out: DocumentFlagEnvironment = { variants: t.variants, defaultVariant: t.defaultVariant };
  if (t.state === 'DISABLED') out.state = 'DISABLED';
  if (t.rules.length > 0) out.rules = t.rules;
  if (t.prerequisites.length > 0) out.prerequisites = t.prerequisites;
  if (t.jsonLogic !== undefined) out.jsonLogic = t.jsonLogic;
  if (t.metadata !== undefined) out.metadata = t.metadata;
  if (s.description !== '') out.description = s.description;
  if (s.payload !== null) out.payload = s.payload;
  if (s.expiredAt !== null) out.expiredAt = s.expiredAt;
  if (s.isPreview) out.preview = { name: s.previewName, content: s.previewContent };
  return ordered(out);
}

/** The fields in the order the interface declares them (a document read back may list them in any order). */
function ordered(e: DocumentFlagEnvironment): DocumentFlagEnvironment {
  const keys: Array<keyof DocumentFlagEnvironment> = [
    'state',
    'variants',
    'defaultVariant',
    'rules',
    'prerequisites',
    'jsonLogic',
    'metadata',
    'description',
    'payload',
    'expiredAt',
    'preview',
  ];
  return Object.fromEntries(keys.filter((k) => e[k] !== undefined).map((k) => [k, e[k]])) as unknown as DocumentFlagEnvironment;
}

/**
 * A document's flag settings with every default filled in, as they would be stored: rule defaults, a
 * rule without an id named by its position (so that applying a document twice changes nothing), dates
 * in stored form.
 */
export function flagSettings(e: DocumentFlagEnvironment): FlagSettings {
  const rules = (e.rules ?? []).map((r, i) => (r.id === undefined ? { ...r, id: `rule-${i + 1}` } : r)) as RuleInput[];
  const targeting: FlagTargeting = {
    state: e.state ?? 'ENABLED',
    variants: e.variants,
    defaultVariant: e.defaultVariant,
    prerequisites: e.prerequisites ?? [],
    rules: normalizeRules(rules, () => ''),
  };
  if (e.jsonLogic !== undefined) targeting.jsonLogic = e.jsonLogic;
  if (e.metadata !== undefined) targeting.metadata = e.metadata;
  return {
    targeting,
    description: e.description ?? '',
    payload: e.payload ?? null,
    expiredAt: e.expiredAt === undefined ? null : normalizeDate(e.expiredAt),
    isPreview: e.preview !== undefined,
    previewName: e.preview?.name ?? null,
    previewContent: e.preview?.content ?? null,
  };
}

export function documentSegment(s: Segment): DocumentSegment {
  return s.description === ''
    ? { name: s.name, match: s.match, conditions: s.conditions }
    : { name: s.name, description: s.description, match: s.match, conditions: s.conditions };
}

export function segmentOf(key: string, s: DocumentSegment): Segment {
  return { key, name: s.name, description: s.description ?? '', match: s.match, conditions: s.conditions };
}

/** The project as a document: environments in the project's order, segments and flags by key. */
export function projectDocument(project: Project, flags: readonly Flag[], segments: readonly Segment[]): ProjectDocument {
  const envName = new Map(project.environments.map((e) => [e.id, e.name]));
  const bySlug = new Map<string, Flag[]>();
  for (const flag of flags) bySlug.set(flag.slug, [...(bySlug.get(flag.slug) ?? []), flag]);
  const order = new Map(project.environments.map((e, i) => [e.id, i]));
  return {
    version: DOCUMENT_VERSION,
    project: project.name,
    environments: project.environments.map((e) => e.name),
    segments: byKey(segments.map((s) => [s.key, documentSegment(s)])),
    flags: byKey(
      [...bySlug].map(([slug, rows]) => {
        const sorted = [...rows].sort((a, b) => order.get(a.environmentId)! - order.get(b.environmentId)!);
        const environments = Object.fromEntries(sorted.map((f) => [envName.get(f.environmentId)!, documentFlagEnvironment(settingsOf(f))]));
        return [slug, { type: sorted[0]!.type, environments }];
      }),
    ),
  };
}

/** Problems of a document that its JSON schema cannot express, as field paths under `at`. */
export function documentProblems(doc: ProjectDocument, at: string): Array<{ field: string; reason: string }> {
  const problems: Array<{ field: string; reason: string }> = [];
  const names = new Set<string>();
  doc.environments.forEach((name, i) => {
    if (names.has(name)) problems.push({ field: `${at}.environments.${i}`, reason: `environment "${name}" is listed twice` });
    names.add(name);
  });
  for (const [slug, flag] of Object.entries(doc.flags)) {
    const listed = Object.keys(flag.environments);
    const missing = doc.environments.filter((n) => !listed.includes(n));
    const unknown = listed.filter((n) => !names.has(n));
    if (missing.length > 0)
      problems.push({ field: `${at}.flags.${slug}.environments`, reason: `must configure every environment of the document; missing: ${missing.join(', ')}` });
    if (unknown.length > 0)
      problems.push({ field: `${at}.flags.${slug}.environments`, reason: `names environments the document does not list: ${unknown.join(', ')}` });
    for (const [envName, e] of Object.entries(flag.environments)) {
      problems.push(...ruleInputProblems(e.rules as RuleInput[] | undefined, `${at}.flags.${slug}.environments.${envName}.rules`));
    }
  }
  return problems;
}

/** One step of making a project match a document. `fields` names what an update changes. */
export type PlanStep =
  | { action: 'create'; kind: 'project' | 'environment'; key: string }
  | { action: 'keep'; kind: 'environment'; key: string; note: string }
  | { action: 'create' | 'update' | 'delete'; kind: 'segment'; key: string; fields?: string[] }
  | { action: 'create' | 'delete'; kind: 'flag'; key: string }
  | { action: 'update'; kind: 'flag'; key: string; environment: string; fields: string[] }
  | { action: 'create' | 'update'; kind: 'form'; key: string; fields?: string[] };

/** What is stored now, in the document's terms (settings by flag slug, then environment name). */
export interface CurrentState {
  environments: string[];
  segments: ReadonlyMap<string, Segment>;
  flags: ReadonlyMap<string, { type: FlagType; environments: ReadonlyMap<string, FlagSettings> }>;
}

const comparable = (s: FlagSettings): Record<string, unknown> => ({ ...documentFlagEnvironment(s) });

/** The fields of two values (objects of the same shape) that differ, compared as canonical JSON. */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((k) => canonical(before[k]) !== canonical(after[k])).sort();
}

/** JSON with object keys sorted, so that key order in a document never reads as a change (variant order does). */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The steps that make `current` (undefined: no such project yet) match `doc`, in the order they are
 * applied: project, environments, segments created or updated, flags created, updated and deleted,
 * segments deleted (after the flags that used them). Environments not in the document are kept (apply
 * never deletes an environment: its clients hold its key).
 */
export function planDocument(doc: ProjectDocument, current: CurrentState | undefined): PlanStep[] {
  const steps: PlanStep[] = [];
  if (!current) steps.push({ action: 'create', kind: 'project', key: doc.project });
  const existingEnvs = new Set(current?.environments ?? []);
  for (const name of doc.environments) if (current && !existingEnvs.has(name)) steps.push({ action: 'create', kind: 'environment', key: name });
  for (const name of current?.environments ?? []) {
    if (!doc.environments.includes(name))
      steps.push({ action: 'keep', kind: 'environment', key: name, note: 'not in the document; apply never deletes an environment' });
  }
  const segmentSteps: PlanStep[] = [];
  for (const [key, segment] of Object.entries(doc.segments)) {
    const before = current?.segments.get(key);
    if (!before) segmentSteps.push({ action: 'create', kind: 'segment', key });
    else {
      const fields = changedFields({ ...documentSegment(before) }, { ...documentSegment(segmentOf(key, segment)) });
      if (fields.length > 0) segmentSteps.push({ action: 'update', kind: 'segment', key, fields });
    }
  }
  steps.push(...segmentSteps);
  for (const [slug, flag] of Object.entries(doc.flags)) {
    const before = current?.flags.get(slug);
    if (!before) {
      steps.push({ action: 'create', kind: 'flag', key: slug });
      continue;
    }
    for (const [envName, wanted] of Object.entries(flag.environments)) {
      const stored = before.environments.get(envName);
      if (!stored) continue; // a new environment: its flags are created with it, set as the document says
      const fields = changedFields(comparable(stored), comparable(flagSettings(wanted)));
      if (fields.length > 0) steps.push({ action: 'update', kind: 'flag', key: slug, environment: envName, fields });
    }
  }
  for (const slug of current?.flags.keys() ?? []) if (!(slug in doc.flags)) steps.push({ action: 'delete', kind: 'flag', key: slug });
  for (const key of current?.segments.keys() ?? []) if (!(key in doc.segments)) steps.push({ action: 'delete', kind: 'segment', key });
  return steps;
}

/** A plan as the command line prints it, one line per step. */
export function describePlan(steps: readonly PlanStep[]): string[] {
  const sign = { create: '+', update: '~', delete: '-', keep: '=' } as const;
  return steps.map((s) => {
    const where = s.kind === 'flag' && s.action === 'update' ? ` in ${s.environment}` : '';
    const fields = 'fields' in s && s.fields ? ` (${s.fields.join(', ')})` : '';
    const note = s.action === 'keep' ? `: ${s.note}` : '';
    return `${sign[s.action]} ${s.kind} ${s.key}${where}${fields}${note}`;
  });
}
