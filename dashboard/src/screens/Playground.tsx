import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'wouter';
import { api, type FlagEntry } from '../api.ts';
import { ErrorMessage, Field, Loading, problemsOf, ProblemsProvider, Section, Select, TextArea } from '../ui/index.ts';
import { Explanation, type PlaygroundAnswer } from '../targeting/Explanation.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';

// Evaluates one flag or every flag of an environment for a context typed here, and shows why: the
// rule that matched, the conditions that failed, the bucket of a split (POST .../evaluate).

const STARTER = JSON.stringify({ targetingKey: 'user-1', user: { country: 'DE', plan: 'pro' } }, null, 2);

type Parsed = { context: Record<string, unknown>; problem?: undefined } | { problem: string; context?: undefined };

function parseContext(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `Not valid JSON: ${(e as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { problem: 'The context is a JSON object such as {"targetingKey": "user-1"}' };
  const key = (value as Record<string, unknown>).targetingKey;
  if (key !== undefined && typeof key !== 'string') return { problem: 'targetingKey is a string' };
  return { context: value as Record<string, unknown> };
}

export default function PlaygroundScreen({ projectKey }: { projectKey: string }) {
  const project = useProject(projectKey);
  const flags = useQuery({
    queryKey: ['flags', projectKey],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/flags`),
  });
  const [envKey, setEnvKey] = useState('');
  const [flag, setFlag] = useState('');
  const [text, setText] = useState(STARTER);
  const evaluate = useMutation({
    mutationFn: ({ env, body }: { env: string; body: Record<string, unknown> }) =>
      api<PlaygroundAnswer>('POST', `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(env)}/evaluate`, body),
    // Evaluating changes nothing; a refusal shows at its field and under the form.
    meta: { error: false, invalidates: [] },
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const environments = project.data.environments;
  const env = environments.find((e) => e.key === envKey) ?? environments[environments.length - 1];
  const parsed = parseContext(text);
  const targetingKey = typeof parsed.context?.targetingKey === 'string' ? parsed.context.targetingKey : '';
  const setTargetingKey = (key: string) => {
    if (!parsed.context) return;
    const next = { ...parsed.context };
    if (key === '') delete next.targetingKey;
    else next.targetingKey = key;
    setText(JSON.stringify(next, null, 2));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!parsed.context || !env) return;
    evaluate.mutate({ env: env.key, body: flag === '' ? { context: parsed.context } : { context: parsed.context, flag } });
  };
  const local = parsed.problem ? [{ field: 'context', reason: parsed.problem }] : [];
  return (
    <>
      <ProjectHeader project={project.data} current="playground" />
      <p className="muted">
        What would a user get? Type their evaluation context, as an OpenFeature SDK sends it, and see each flag's answer with the reason. Nothing is saved.
      </p>
      <ProblemsProvider value={[...local, ...problemsOf(evaluate.error)]}>
        <form onSubmit={submit} className="card" aria-label="Playground">
          <div className="row">
            <Select label="Environment" value={env?.key ?? ''} onChange={setEnvKey}>
              {environments.map((e) => (
                <option key={e.key} value={e.key}>
                  {e.name}
                </option>
              ))}
            </Select>
            <Select label="Flag" path="flag" value={flag} onChange={setFlag}>
              <option value="">All flags</option>
              {(flags.data?.flags ?? []).map((f) => (
                <option key={f.slug} value={f.slug}>
                  {f.slug}
                </option>
              ))}
            </Select>
            <Field
              className="grow"
              label="Targeting key"
              value={targetingKey}
              onChange={setTargetingKey}
              disabled={!parsed.context}
              hint={parsed.context ? 'The user id: splits keep each key in its bucket' : 'Fix the JSON below to change it here'}
            />
          </div>
          <TextArea
            label="Evaluation context (JSON)"
            path="context"
            value={text}
            onChange={setText}
            rows={Math.max(6, Math.min(20, text.split('\n').length + 1))}
            spellCheck={false}
          />
          <ErrorMessage error={evaluate.error} />
          <button type="submit" className="primary" disabled={evaluate.isPending || !parsed.context}>
            {evaluate.isPending ? 'Evaluating…' : flag === '' ? `Evaluate all flags in ${env?.name ?? ''}` : `Evaluate ${flag} in ${env?.name ?? ''}`}
          </button>
        </form>
      </ProblemsProvider>
      {evaluate.data && (
        <Section title={`Result in ${evaluate.variables.env === env?.key ? env.name : evaluate.variables.env}`}>
          <Explanation answer={evaluate.data} projectKey={projectKey} />
        </Section>
      )}
      {flags.data && flags.data.flags.length === 0 && (
        <p className="muted">
          No flag yet: <Link href={`/projects/${projectKey}`}>create one</Link>.
        </p>
      )}
    </>
  );
}
