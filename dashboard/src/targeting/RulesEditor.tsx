import { useEffect, useId, useState } from 'react';
import { Link } from 'wouter';
import type { Segment } from '../api.ts';
import { ConditionsEditor } from './ConditionsEditor.tsx';
import { Checkbox, Field, GroupProblems, Select } from '../ui/index.ts';
import { emptyRule, percentTotal, type RuleDraft, type SplitDraft } from './rules.ts';

// Ordered rules of a flag in one environment: the first that matches serves. Each can be switched off,
// moved (buttons, so that the keyboard can do it) and deleted.

export function RulesEditor({
  rules,
  onChange,
  variantNames,
  segments,
  projectKey,
  envName,
  disabled,
}: {
  rules: RuleDraft[];
  onChange: (next: RuleDraft[]) => void;
  variantNames: string[];
  segments: Segment[];
  projectKey: string;
  envName: string;
  disabled?: boolean;
}) {
  const [announcement, setAnnouncement] = useState('');
  const [focus, setFocus] = useState<{ key: number; button: 'up' | 'down' } | undefined>();
  const base = useId();
  useEffect(() => {
    if (!focus) return;
    const wanted = document.getElementById(`${base}-${focus.key}-${focus.button}`) as HTMLButtonElement | null;
    const other = document.getElementById(`${base}-${focus.key}-${focus.button === 'up' ? 'down' : 'up'}`) as HTMLButtonElement | null;
    (wanted && !wanted.disabled ? wanted : other)?.focus();
    setFocus(undefined);
  }, [focus, base]);
  const set = (i: number, patch: Partial<RuleDraft>) => onChange(rules.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...rules];
    const [rule] = next.splice(i, 1);
    next.splice(i + by, 0, rule!);
    onChange(next);
    setFocus({ key: rule!.key, button: by < 0 ? 'up' : 'down' });
    setAnnouncement(`${rule!.name || 'The rule'} is now rule ${i + by + 1} of ${rules.length}`);
  };
  return (
    <div className="rules">
      <p className="sr-only" aria-live="polite">
        {announcement}
      </p>
      <GroupProblems path="rules" />
      {rules.length === 0 && <p className="muted">No rule: everyone gets the default serve.</p>}
      <ol className="rule-list">
        {rules.map((rule, i) => {
          const at = `rules.${i}`;
          const owner = `rule ${i + 1}`;
          return (
            <li key={rule.key}>
              <fieldset className={`rule${rule.enabled ? '' : ' off'}`}>
                <legend>
                  Rule {i + 1}
                  {rule.name ? `: ${rule.name}` : ''}
                  {!rule.enabled && <span className="badge">Off</span>}
                </legend>
                <GroupProblems path={at} />
                <div className="row">
                  <Field
                    className="grow"
                    label="Rule name"
                    path={`${at}.name`}
                    value={rule.name}
                    onChange={(name) => set(i, { name })}
                    hint="Optional: the playground and OFREP metadata name the rule with it"
                  />
                  <Checkbox label="Rule on" checked={rule.enabled} onChange={(enabled) => set(i, { enabled })} />
                  <div className="rule-actions">
                    <button id={`${base}-${rule.key}-up`} type="button" className="small" disabled={disabled || i === 0} onClick={() => move(i, -1)}>
                      Move up<span className="sr-only"> rule {i + 1}</span>
                    </button>
                    <button
                      id={`${base}-${rule.key}-down`}
                      type="button"
                      className="small"
                      disabled={disabled || i === rules.length - 1}
                      onClick={() => move(i, 1)}
                    >
                      Move down<span className="sr-only"> rule {i + 1}</span>
                    </button>
                    <button
                      type="button"
                      className="small danger-text"
                      disabled={disabled}
                      onClick={() => {
                        onChange(rules.filter((_, j) => j !== i));
                        setAnnouncement(`Rule ${i + 1} deleted`);
                      }}
                    >
                      Delete rule {i + 1}
                    </button>
                  </div>
                </div>
                <h4>If every condition holds</h4>
                <ConditionsEditor
                  conditions={rule.conditions}
                  onChange={(conditions) => set(i, { conditions })}
                  path={`${at}.conditions`}
                  owner={owner}
                  disabled={disabled}
                />
                <SegmentPicker
                  segments={segments}
                  chosen={rule.segments}
                  onChange={(chosen) => set(i, { segments: chosen })}
                  path={`${at}.segments`}
                  owner={owner}
                  projectKey={projectKey}
                />
                <h4>Serve</h4>
                <ServeEditor rule={rule} onChange={(patch) => set(i, patch)} variantNames={variantNames} path={`${at}.serve`} owner={owner} />
              </fieldset>
            </li>
          );
        })}
      </ol>
      <button type="button" disabled={disabled || variantNames.length === 0} onClick={() => onChange([...rules, emptyRule(variantNames)])}>
        Add rule<span className="sr-only"> in {envName}</span>
      </button>
    </div>
  );
}

function SegmentPicker({
  segments,
  chosen,
  onChange,
  path,
  owner,
  projectKey,
}: {
  segments: Segment[];
  chosen: string[];
  onChange: (next: string[]) => void;
  path: string;
  owner: string;
  projectKey: string;
}) {
  // Segments the rule names but the project no longer lists stay visible, so that they can be taken out.
  const keys = [...segments.map((s) => s.key), ...chosen.filter((k) => !segments.some((s) => s.key === k))];
  return (
    <fieldset className="segments-pick">
      <legend>And the user is in every one of these segments ({owner})</legend>
      <GroupProblems path={path} />
      {keys.length === 0 && (
        <p className="muted">
          No segment in this project yet: <Link href={`/projects/${projectKey}/segments`}>create one under Segments</Link>.
        </p>
      )}
      <div className="checks">
        {keys.map((key) => {
          const segment = segments.find((s) => s.key === key);
          return (
            <Checkbox
              key={key}
              label={segment ? `${segment.name} (${key})` : `${key} (not in the project)`}
              checked={chosen.includes(key)}
              onChange={(on) => onChange(on ? [...chosen, key] : chosen.filter((k) => k !== key))}
            />
          );
        })}
      </div>
    </fieldset>
  );
}

function ServeEditor({
  rule,
  onChange,
  variantNames,
  path,
  owner,
}: {
  rule: RuleDraft;
  onChange: (patch: Partial<RuleDraft>) => void;
  variantNames: string[];
  path: string;
  owner: string;
}) {
  const name = useId();
  const split = rule.split;
  const setSplit = (patch: Partial<SplitDraft>) => onChange({ split: { ...split, ...patch } });
  const total = percentTotal(split.rows);
  return (
    <div className="serve">
      <GroupProblems path={path} />
      <div role="radiogroup" aria-label={`What ${owner} serves`} className="row">
        <div className="check">
          <input id={`${name}-v`} type="radio" name={name} checked={rule.serve === 'variant'} onChange={() => onChange({ serve: 'variant' })} />
          <label htmlFor={`${name}-v`}>One variant</label>
        </div>
        <div className="check">
          <input id={`${name}-s`} type="radio" name={name} checked={rule.serve === 'split'} onChange={() => onChange({ serve: 'split' })} />
          <label htmlFor={`${name}-s`}>A percentage split</label>
        </div>
      </div>
      {rule.serve === 'variant' && (
        <Select label={`Variant served by ${owner}`} path={`${path}.variant`} value={rule.variant} onChange={(variant) => onChange({ variant })}>
          {!variantNames.includes(rule.variant) && <option value={rule.variant}>{rule.variant || 'Choose a variant'}</option>}
          {variantNames.map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </Select>
      )}
      {rule.serve === 'split' && (
        <fieldset className="split">
          <legend>Split of {owner}</legend>
          <GroupProblems path={`${path}.split`} />
          <GroupProblems path={`${path}.split.weights`} />
          <div className="row">
            {split.rows.map((row, i) => (
              <Field
                key={row.variant}
                className="percent"
                label={`${row.variant} %`}
                path={`${path}.split.weights.${i}`}
                type="number"
                step="any"
                value={row.percent}
                onChange={(percent) => setSplit({ touched: true, rows: split.rows.map((r, j) => (j === i ? { ...r, percent } : r)) })}
              />
            ))}
          </div>
          <p className={total === 100 ? 'muted' : 'field-error'} aria-live="polite">
            Total {total ?? '?'} %{total === 100 ? '' : ' (must be 100 %)'}
          </p>
          <Field
            label="Bucket by (attribute)"
            path={`${path}.split.bucketBy`}
            value={split.bucketBy}
            onChange={(bucketBy) => setSplit({ bucketBy })}
            placeholder="targetingKey"
            hint="Empty: by the targeting key, so each user keeps their variant. Or a dot path such as company.id."
          />
          <p className="muted small-text">
            Bucketing: <code>{split.bucketing}</code> (recorded with the split: a later algorithm never moves users silently)
          </p>
        </fieldset>
      )}
    </div>
  );
}
