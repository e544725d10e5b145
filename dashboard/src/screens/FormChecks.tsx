import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { api, type Condition, type FieldRules, type FilePolicy, type Form, type SpamChecks, type SpamDryRun } from '../api.ts';
import { ConditionsEditor } from '../targeting/ConditionsEditor.tsx';
import {
  Badge,
  Button,
  Checkbox,
  EmptyState,
  ErrorMessage,
  Field,
  formatDate,
  plural,
  problemsOf,
  ProblemsProvider,
  Section,
  Table,
  TextArea,
} from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { conditionDrafts, conditionsOf, lines, numberText, usePatchForm, wholeNumber, wholeOrEmpty } from './form-drafts.ts';

// Issue 34: the rules the server checks before it keeps a submission: field rules (a JSON Schema subset,
// edited as JSON; the server's 400 names the part it refuses), the file policy, and the spam checks with
// a dry run over the last 1,000 submissions before saving.

const RULES_EXAMPLE = {
  type: 'object',
  required: ['email', 'message'],
  properties: { email: { type: 'string', format: 'email' }, message: { type: 'string', minLength: 10, maxLength: 5000 } },
};

const jsonProblem = (v: string) => {
  if (v.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(v);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : 'Must be a JSON object';
  } catch (error) {
    return `Not valid JSON: ${(error as Error).message}`;
  }
};

export function FieldRulesSection({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const [text, setText] = useState(form.fieldRules ? JSON.stringify(form.fieldRules, null, 2) : '');
  const save = usePatchForm(form, 'Saved the field rules');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (jsonProblem(text)) return;
    save.mutate({ fieldRules: text.trim() === '' ? null : (JSON.parse(text) as FieldRules) });
  };
  return (
    <Section title="Field rules">
      <p className="muted">
        Checked before a submission is kept: <code>type</code>, <code>required</code>, <code>format</code> (email, uri, date), <code>minLength</code>/
        <code>maxLength</code>, <code>pattern</code>, <code>enum</code>, <code>minimum</code>/<code>maximum</code> and <code>additionalProperties: false</code>.
        A refused submission answers 422 with one error per field.
      </p>
      <ProblemsProvider value={problemsOf(save.error)}>
        <form onSubmit={submit} aria-label="Field rules">
          <TextArea
            label="Field rules (JSON Schema)"
            className="code-field"
            value={text}
            onChange={setText}
            rows={10}
            spellCheck={false}
            validate={jsonProblem}
            hint="One JSON Schema object over the fields; empty: no rule"
          />
          <ErrorMessage error={save.error} />
          <div className="actions">
            <Button type="submit" variant="primary" busy={save.isPending} busyText="Saving…" disabled={!canWrite}>
              Save field rules
            </Button>
            {text.trim() === '' && <Button onClick={() => setText(JSON.stringify(RULES_EXAMPLE, null, 2))}>Start from an example</Button>}
          </div>
        </form>
      </ProblemsProvider>
    </Section>
  );
}

export function FilePolicySection({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const p = form.filePolicy as FilePolicy | null;
  const [on, setOn] = useState(p !== null);
  const [types, setTypes] = useState((p?.allowedTypes ?? []).join('\n'));
  const [maxFileBytes, setMaxFileBytes] = useState(numberText(p?.maxFileBytes));
  const [maxFiles, setMaxFiles] = useState(numberText(p?.maxFiles));
  const [maxTotalBytes, setMaxTotalBytes] = useState(numberText(p?.maxTotalBytes));
  const save = usePatchForm(form, 'Saved the file policy');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const numbers = [maxFileBytes, maxFiles, maxTotalBytes].map(wholeNumber);
    if (numbers.some((n) => Number.isNaN(n))) return;
    const [file, files, total] = numbers;
    save.mutate({
      filePolicy: on ? { allowedTypes: lines(types), maxFileBytes: file ?? null, maxFiles: files ?? null, maxTotalBytes: total ?? null } : null,
    });
  };
  return (
    <Section title="File policy">
      <ProblemsProvider value={problemsOf(save.error)}>
        <form onSubmit={submit} aria-label="File policy">
          <Checkbox
            label="Use a file policy"
            checked={on}
            onChange={setOn}
            hint="Off: the instance's limits apply (1 MB per file, 5 files). Types are detected from the bytes, not the name"
          />
          {on && (
            <div className="settings-groups">
              <fieldset>
                <legend>Types</legend>
                <TextArea
                  label="Allowed types"
                  path="filePolicy.allowedTypes"
                  value={types}
                  onChange={setTypes}
                  hint="One MIME type per line (image/png, application/pdf, image/*); empty: any type"
                />
              </fieldset>
              <fieldset>
                <legend>Limits</legend>
                <Field
                  label="Largest file (bytes)"
                  path="filePolicy.maxFileBytes"
                  value={maxFileBytes}
                  onChange={setMaxFileBytes}
                  inputMode="numeric"
                  validate={wholeOrEmpty}
                  hint="Within the instance's limit; empty: the instance's"
                />
                <Field label="Most files" path="filePolicy.maxFiles" value={maxFiles} onChange={setMaxFiles} inputMode="numeric" validate={wholeOrEmpty} />
                <Field
                  label="Largest total (bytes)"
                  path="filePolicy.maxTotalBytes"
                  value={maxTotalBytes}
                  onChange={setMaxTotalBytes}
                  inputMode="numeric"
                  validate={wholeOrEmpty}
                />
              </fieldset>
            </div>
          )}
          <ErrorMessage error={save.error} inline={['filePolicy']} />
          <Button type="submit" variant="primary" busy={save.isPending} busyText="Saving…" disabled={!canWrite}>
            Save file policy
          </Button>
        </form>
      </ProblemsProvider>
    </Section>
  );
}

export function SpamChecksSection({ form }: { form: Form }) {
  const canWrite = useCanWrite();
  const s = (form.spamChecks ?? {}) as SpamChecks;
  const [duplicates, setDuplicates] = useState(s.duplicates?.enabled ?? false);
  const [windowMinutes, setWindowMinutes] = useState(numberText(s.duplicates?.windowMinutes));
  const [minFill, setMinFill] = useState(numberText(s.minFillSeconds));
  const [disposable, setDisposable] = useState(s.disposableEmails ?? false);
  const [perAddress, setPerAddress] = useState(numberText(s.rateLimit?.perAddress));
  const [perMinute, setPerMinute] = useState(numberText(s.rateLimit?.perMinute));
  const [proofOfWork, setProofOfWork] = useState(s.proofOfWork ?? false);
  const [conditions, setConditions] = useState(conditionDrafts((s.rules ?? []) as Condition[]));
  const [problem, setProblem] = useState<string | undefined>();
  const save = usePatchForm(form, 'Saved the spam checks');
  const dryRun = useMutation({
    mutationFn: (spamChecks: SpamChecks) => api<SpamDryRun>('POST', `/forms/${encodeURIComponent(form.key)}/spam-rules/dry-run`, { spamChecks }),
    meta: { error: false, invalidates: [] },
  });
  /** The checks to send, or a problem in words. */
  const build = (): SpamChecks | string => {
    const [window, perAddr, perMin] = [windowMinutes, perAddress, perMinute].map(wholeNumber);
    const fill = minFill.trim() === '' ? undefined : Number(minFill.trim());
    if ([window, perAddr, perMin].some((n) => Number.isNaN(n))) return 'Enter whole numbers (or nothing) for the window and the rate limits';
    if (fill !== undefined && !(fill >= 0)) return 'Enter the minimum fill time in seconds, or nothing';
    const rules = conditionsOf(conditions, 'Rule condition');
    if ('problem' in rules) return rules.problem;
    const checks: SpamChecks = {};
    if (duplicates) checks.duplicates = { enabled: true, ...(window !== undefined ? { windowMinutes: window } : {}) };
    if (fill !== undefined) checks.minFillSeconds = fill;
    if (disposable) checks.disposableEmails = true;
    if (perAddr !== undefined || perMin !== undefined)
      checks.rateLimit = { ...(perAddr !== undefined ? { perAddress: perAddr } : {}), ...(perMin !== undefined ? { perMinute: perMin } : {}) };
    if (rules.conditions.length > 0) checks.rules = rules.conditions;
    if (proofOfWork) checks.proofOfWork = true;
    return checks;
  };
  const act = (then: (checks: SpamChecks) => void) => {
    const checks = build();
    setProblem(typeof checks === 'string' ? checks : undefined);
    if (typeof checks !== 'string') then(checks);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    act((checks) => save.mutate({ spamChecks: Object.keys(checks).length === 0 ? null : checks }));
  };
  return (
    <Section title="Spam checks">
      <p className="muted">
        Beside the honeypot and the CAPTCHA of the settings above; each is off until set. A submission they catch is kept as spam, with the reasons.
      </p>
      <ProblemsProvider value={problemsOf(save.error ?? dryRun.error)}>
        <form onSubmit={submit} aria-label="Spam checks">
          <div className="settings-groups">
            <fieldset>
              <legend>Behaviour</legend>
              <Checkbox label="Duplicates" checked={duplicates} onChange={setDuplicates} hint="The same fields again within the window" />
              {duplicates && (
                <Field
                  label="Duplicate window (minutes)"
                  path="spamChecks.duplicates.windowMinutes"
                  value={windowMinutes}
                  onChange={setWindowMinutes}
                  inputMode="numeric"
                  validate={wholeOrEmpty}
                />
              )}
              <Field
                label="Minimum fill time (seconds)"
                path="spamChecks.minFillSeconds"
                value={minFill}
                onChange={setMinFill}
                inputMode="decimal"
                hint="Faster than this from rendering the form is spam; empty: off"
              />
              <Checkbox
                label="Disposable e-mail domains"
                checked={disposable}
                onChange={setDisposable}
                hint="An address at a throw-away mail service is spam"
              />
              <Checkbox
                label="Proof of work"
                checked={proofOfWork}
                onChange={setProofOfWork}
                hint="A self-hosted ALTCHA challenge the browser solves; no third party involved"
              />
            </fieldset>
            <fieldset>
              <legend>Rate limit</legend>
              <Field
                label="Per address (per minute)"
                hint="Submissions from one IP address in 60 s; more are refused (429), not kept"
                path="spamChecks.rateLimit.perAddress"
                value={perAddress}
                onChange={setPerAddress}
                inputMode="numeric"
                validate={wholeOrEmpty}
              />
              <Field
                label="Overall (per minute)"
                hint="Submissions to the form in 60 s"
                path="spamChecks.rateLimit.perMinute"
                value={perMinute}
                onChange={setPerMinute}
                inputMode="numeric"
                validate={wholeOrEmpty}
              />
            </fieldset>
          </div>
          <fieldset>
            <legend>Rules on fields</legend>
            <p className="muted small-text">
              A submission that meets any of these conditions is spam: message matches a pattern, country is one of a list, request.ip in a CIDR range.
            </p>
            <ConditionsEditor conditions={conditions} onChange={setConditions} path="spamChecks.rules" owner="the spam rule" disabled={!canWrite} />
          </fieldset>
          {problem && (
            <div role="alert" className="error">
              <p>{problem}</p>
            </div>
          )}
          <ErrorMessage error={save.error ?? dryRun.error} inline={['spamChecks']} />
          <div className="actions">
            <Button type="submit" variant="primary" busy={save.isPending} busyText="Saving…" disabled={!canWrite}>
              Save spam checks
            </Button>
            <Button onClick={() => act((checks) => dryRun.mutate(checks))} busy={dryRun.isPending} busyText="Trying…" disabled={!canWrite}>
              Dry run on the last 1,000
            </Button>
          </div>
        </form>
      </ProblemsProvider>
      {dryRun.data && <DryRunResult form={form} result={dryRun.data} />}
    </Section>
  );
}

function DryRunResult({ form, result }: { form: Form; result: SpamDryRun }) {
  return (
    <div className="dry-run" role="status" aria-label="Dry run result">
      <p>
        Of the last {plural(result.checked, 'submission')}, these checks call {result.spam.toLocaleString()} spam;{' '}
        {result.changed.length === 0 ? 'no verdict would change.' : `${plural(result.changed.length, 'verdict')} would change:`}
      </p>
      {result.checked === 0 && <EmptyState title="No submission to try them on yet" />}
      {result.changed.length > 0 && (
        <Table label="Verdicts that would change">
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Now</th>
              <th scope="col">With these checks</th>
              <th scope="col">Reasons</th>
            </tr>
          </thead>
          <tbody>
            {result.changed.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link href={`/forms/${form.key}/submissions/${c.id}`}>{formatDate(c.createdAt)}</Link>
                </td>
                <td>{c.spamBefore ? <Badge tone="warn">Spam</Badge> : <Badge tone="ok">Not spam</Badge>}</td>
                <td>{c.spamAfter ? <Badge tone="warn">Spam</Badge> : <Badge tone="ok">Not spam</Badge>}</td>
                <td>{c.spamReasons.map((r) => `${r.check}: ${r.detail}`).join('; ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </div>
  );
}
