import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type EnvFlag, type FieldProblem, type FlagEntry, type Prerequisite, type Segment } from '../api.ts';
import { ErrorMessage, GroupProblems, problemsOf, ProblemsProvider, Select, TextArea } from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { type FlagWrite, ProtectedNote, ProtectedWriteDialog, useIsProtected } from '../screens/ProtectedWrite.tsx';
import { PrerequisitesEditor } from './PrerequisitesEditor.tsx';
import { addVariantToSplits, followVariant, fromRuleDraft, type RuleDraft, toRuleDraft } from './rules.ts';
import { RulesEditor } from './RulesEditor.tsx';
import { fromVariantDrafts, toVariantDrafts, type VariantDraft, VariantsEditor } from './variants.tsx';

// A flag's targeting in one environment: variants, default serve, prerequisites and ordered rules (or
// imported JSON Logic), saved together with one PATCH; a refused save shows each problem at its field.

interface Draft {
  variants: VariantDraft[];
  defaultVariant: string | null;
  rules: RuleDraft[];
  prerequisites: Prerequisite[];
  /** Imported JSON Logic as text; null when the flag has none (or it is being removed). */
  jsonLogic: string | null;
  /** The default variant was renamed here (a boolean flag's default serve is otherwise its switch's). */
  renamedDefault: boolean;
}

const hasJsonLogic = (v: EnvFlag) => v.jsonLogic !== null && v.jsonLogic !== undefined;

function initialDraft(value: EnvFlag): Draft {
  const names = Object.keys(value.variants);
  return {
    variants: toVariantDrafts(value.type, value.variants),
    defaultVariant: value.defaultVariant,
    rules: value.rules.map((r) => toRuleDraft(r, names)),
    prerequisites: value.prerequisites.map((p) => ({ flag: p.flag, variants: [...p.variants] })),
    jsonLogic: hasJsonLogic(value) ? JSON.stringify(value.jsonLogic, null, 2) : null,
    renamedDefault: false,
  };
}

/** What identifies the targeting as saved: the editor starts again from the server's answer when it changes. */
export const targetingVersion = (v: EnvFlag) => JSON.stringify([v.type, v.state, v.variants, v.defaultVariant, v.rules, v.prerequisites, v.jsonLogic ?? null]);

export function TargetingEditor({ projectKey, value, flags, segments }: { projectKey: string; value: EnvFlag; flags: FlagEntry[]; segments: Segment[] }) {
  const canWrite = useCanWrite();
  const env = value.environment;
  const version = targetingVersion(value);
  const [editing, setEditing] = useState(() => ({ base: version, dirty: false, draft: initialDraft(value) }));
  // A change saved elsewhere (another screen, another person) shows here while nothing is being edited.
  if (!editing.dirty && editing.base !== version) setEditing({ base: version, dirty: false, draft: initialDraft(value) });
  const draft = editing.draft;
  const setDraft = (next: Draft) => setEditing({ ...editing, dirty: true, draft: next });
  const [local, setLocal] = useState<FieldProblem[]>([]);
  // A protected environment's targeting is proposed for review (issue 31 item 4).
  const guarded = useIsProtected(projectKey)(env.key);
  const [write, setWrite] = useState<FlagWrite | null>(null);
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<EnvFlag>(
        'PATCH',
        `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(env.key)}/flags/${encodeURIComponent(value.slug)}`,
        body,
      ),
    // The targeting is part of the flag list's entries, the audit, staleness and the environments' comparison.
    meta: {
      success: `Saved targeting in ${env.name}`,
      error: false,
      invalidates: [['flags', projectKey], ['audit'], ['stale-flags', projectKey], ['compare', projectKey]],
    },
    onSuccess: (saved) => setEditing({ base: targetingVersion(saved), dirty: false, draft: initialDraft(saved) }),
  });
  const names = draft.variants.map((v) => v.name.trim());

  const changeVariants = (next: VariantDraft[]) => {
    let { rules, defaultVariant, renamedDefault } = draft;
    for (const before of draft.variants) {
      const after = next.find((v) => v.id === before.id);
      const from = before.name.trim();
      const to = after?.name.trim();
      if (to === from) continue;
      rules = followVariant(rules, from, to);
      if (defaultVariant === from && to !== undefined) {
        defaultVariant = to;
        renamedDefault = true;
      }
    }
    for (const added of next.filter((v) => !draft.variants.some((b) => b.id === v.id))) rules = addVariantToSplits(rules, added.name.trim());
    setDraft({ ...draft, variants: next, rules, defaultVariant, renamedDefault });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { variants, problems } = fromVariantDrafts(value.type, draft.variants);
    if ((value.type !== 'boolean' || draft.renamedDefault) && draft.defaultVariant !== null && !names.includes(draft.defaultVariant))
      problems.push({ field: 'defaultVariant', reason: `The default serve ${draft.defaultVariant} is no longer a variant: choose another` });
    const body: Record<string, unknown> = { variants };
    // A boolean flag's default serve is its switch: sent only when a rename of its variant moves it.
    if (value.type !== 'boolean' || draft.renamedDefault) body.defaultVariant = draft.defaultVariant;
    if (draft.jsonLogic !== null) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(draft.jsonLogic);
      } catch (e) {
        problems.push({ field: 'jsonLogic', reason: `Not valid JSON: ${(e as Error).message}` });
      }
      if (parsed !== undefined && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)))
        problems.push({ field: 'jsonLogic', reason: 'JSON Logic targeting is a JSON object such as {"if": [...]}' });
      body.jsonLogic = parsed;
    } else {
      body.rules = draft.rules.map((r, i) => fromRuleDraft(r, i, problems));
      body.prerequisites = draft.prerequisites;
      if (hasJsonLogic(value)) body.jsonLogic = null;
    }
    setLocal(problems);
    if (problems.length > 0) {
      save.reset();
      return;
    }
    if (guarded) setWrite({ env, slug: value.slug, values: body, title: `Change the targeting of ${value.slug} in ${env.name}` });
    else save.mutate(body);
  };

  const problems = [...local, ...problemsOf(save.error)];
  const boolean = value.type === 'boolean';
  const booleanDefault = draft.renamedDefault ? draft.defaultVariant : value.defaultVariant;
  return (
    <ProblemsProvider value={problems}>
      <form onSubmit={submit} className="targeting" aria-label={`Targeting in ${env.name}`}>
        <h3>Variants</h3>
        <VariantsEditor type={value.type} variants={draft.variants} onChange={changeVariants} owner={`the flag in ${env.name}`} disabled={!canWrite} />

        <h3>Default serve</h3>
        {boolean ? (
          <>
            <GroupProblems path="defaultVariant" />
            <p>
              {booleanDefault === null ? 'No value' : <code>{booleanDefault}</code>}: the switch “Enabled in {env.name}” above sets it. Users that no rule
              matches get it, and so does <code>/v1</code>, which has no user context.
            </p>
          </>
        ) : (
          <Select
            label={`Default serve in ${env.name}`}
            path="defaultVariant"
            value={draft.defaultVariant ?? ''}
            onChange={(v) => setDraft({ ...draft, defaultVariant: v === '' ? null : v })}
            hint="What users get when no rule matches"
          >
            <option value="">No value (callers get their own default)</option>
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
            {draft.defaultVariant !== null && !names.includes(draft.defaultVariant) && <option value={draft.defaultVariant}>{draft.defaultVariant}</option>}
          </Select>
        )}

        {draft.jsonLogic !== null ? (
          <>
            <h3>Imported targeting (JSON Logic)</h3>
            <p className="notice" role="note">
              This flag's targeting came from a flagd definition as JSON Logic that the rule editor cannot show. Flagpost evaluates it as it is. Edit it as
              JSON, or remove it to write rules instead.
            </p>
            <TextArea
              label={`JSON Logic in ${env.name}`}
              path="jsonLogic"
              value={draft.jsonLogic}
              onChange={(jsonLogic) => setDraft({ ...draft, jsonLogic })}
              rows={Math.min(24, draft.jsonLogic.split('\n').length + 1)}
              readOnly={!canWrite}
              spellCheck={false}
            />
            <button type="button" className="small danger-text" disabled={!canWrite} onClick={() => setDraft({ ...draft, jsonLogic: null })}>
              Remove the JSON Logic and write rules
            </button>
          </>
        ) : (
          <>
            <h3>Prerequisites</h3>
            <p className="muted">The flag serves its default serve unless each of these flags gives one of the chosen variants for the same user.</p>
            <PrerequisitesEditor
              prerequisites={draft.prerequisites}
              onChange={(prerequisites) => setDraft({ ...draft, prerequisites })}
              flags={flags}
              slug={value.slug}
              envKey={env.key}
              disabled={!canWrite}
            />
            <h3>Rules</h3>
            <p className="muted">In order: the first rule that matches serves. A rule switched off is kept but skipped.</p>
            <RulesEditor
              rules={draft.rules}
              onChange={(rules) => setDraft({ ...draft, rules })}
              variantNames={names}
              segments={segments}
              projectKey={projectKey}
              envName={env.name}
              disabled={!canWrite}
            />
          </>
        )}
        {value.flagd && !value.flagd.portable && (
          <p className="note" role="note">
            flagd cannot evaluate this targeting as Flagpost does{value.flagd.note ? ` (${value.flagd.note})` : ''}: the flagd definition of {env.name} exports
            the flag disabled, so that flagd callers get their own default rather than a different answer.
          </p>
        )}
        {value.metadata && Object.keys(value.metadata).length > 0 && (
          <>
            <h3>Metadata</h3>
            <p className="muted">flagd flag metadata, returned with every evaluation (set through the admin API or an import).</p>
            <pre tabIndex={0}>
              <code>{JSON.stringify(value.metadata, null, 2)}</code>
            </pre>
          </>
        )}

        {local.length > 0 && (
          <div role="alert" className="error">
            <p>Not saved: {local.length === 1 ? 'one field needs' : `${local.length} fields need`} a change (shown at each field).</p>
          </div>
        )}
        <ErrorMessage error={save.error} />
        {guarded && <ProtectedNote envName={env.name} />}
        <div className="actions">
          <button type="submit" className="primary" disabled={save.isPending || !canWrite}>
            {save.isPending ? 'Saving…' : `Save targeting in ${env.name}${guarded ? ' for review' : ''}`}
          </button>
          <button
            type="button"
            onClick={() => {
              setEditing({ base: version, dirty: false, draft: initialDraft(value) });
              setLocal([]);
              save.reset();
            }}
          >
            Discard changes
          </button>
        </div>
      </form>
      <ProtectedWriteDialog
        projectKey={projectKey}
        write={write}
        onClose={() => setWrite(null)}
        onWritten={(saved) => setEditing({ base: targetingVersion(saved as EnvFlag), dirty: false, draft: initialDraft(saved as EnvFlag) })}
      />
    </ProblemsProvider>
  );
}
