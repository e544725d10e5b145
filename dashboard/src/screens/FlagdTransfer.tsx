import { useMutation } from '@tanstack/react-query';
import { type ChangeEvent, type FormEvent, useId, useState } from 'react';
import { api, type Environment } from '../api.ts';
import { ErrorMessage, Section, TextArea } from '../ui.tsx';
import { useCanWrite } from '../session.ts';

// An environment's flags as a flagd flag definition (the OpenFeature project's declarative format), to
// download or to import: GET and PUT /admin/v1/projects/{projectKey}/environments/{envKey}/flagd.

const flagdPath = (projectKey: string, envKey: string) => `/projects/${encodeURIComponent(projectKey)}/environments/${encodeURIComponent(envKey)}/flagd`;

/** What an import answers: the flags (and segments) it created, changed or found as they were. */
interface ImportAnswer {
  created: string[];
  updated: string[];
  unchanged: string[];
  segments: string[];
}

const list = (what: string, keys: string[]) => (keys.length === 0 ? `no flag ${what}` : `${what}: ${keys.join(', ')}`);

export function FlagdTransfer({ projectKey, environments }: { projectKey: string; environments: Environment[] }) {
  const canWrite = useCanWrite();
  const [envKey, setEnvKey] = useState('');
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const selectId = useId();
  const fileId = useId();
  const env = environments.find((e) => e.key === envKey) ?? environments[0];
  const importing = useMutation({
    mutationFn: ({ key, body }: { key: string; body: unknown }) => api<ImportAnswer>('PUT', flagdPath(projectKey, key), body),
  });
  const readFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    setText(await file.text());
    setProblem(undefined);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!env) return;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      setProblem(`The definition is not valid JSON: ${(e as Error).message}`);
      return;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body) || !('flags' in body)) {
      setProblem('A flagd definition is a JSON object with "flags" (and optionally "$evaluators")');
      return;
    }
    setProblem(undefined);
    importing.mutate({ key: env.key, body });
  };
  const answer = importing.data;
  return (
    <Section title="flagd definitions">
      <p className="muted">
        flagd's flag definition is OpenFeature's declarative format: flagd and its in-process providers evaluate an exported definition as Flagpost does. An
        import creates or updates each flag it holds in that environment (a flag new to the project starts off in the other environments) and leaves the other
        flags alone; an invalid file changes nothing.
      </p>
      <div className="field">
        <label htmlFor={selectId}>Environment for flagd</label>
        <select id={selectId} value={env?.key ?? ''} onChange={(e) => setEnvKey(e.target.value)}>
          {environments.map((e) => (
            <option key={e.key} value={e.key}>
              {e.name}
            </option>
          ))}
        </select>
      </div>
      {env && (
        <p>
          <a className="button" href={`/admin/v1${flagdPath(projectKey, env.key)}`} download={`flagd-${projectKey}-${env.key}.json`}>
            Download flagd definition of {env.name}
          </a>
        </p>
      )}
      <form onSubmit={submit}>
        <div className="field">
          <label htmlFor={fileId}>flagd file to import</label>
          <input id={fileId} type="file" accept="application/json,.json" onChange={readFile} />
        </div>
        <TextArea label="Or paste a flagd definition (JSON)" value={text} onChange={setText} rows={8} />
        {problem && (
          <div role="alert" className="error">
            <p>{problem}</p>
          </div>
        )}
        <ErrorMessage error={importing.error} />
        <button type="submit" className="primary" disabled={importing.isPending || !canWrite || text.trim() === ''}>
          {importing.isPending ? 'Importing…' : `Import into ${env?.name ?? ''}`}
        </button>
        {answer && importing.variables && (
          <p role="status">
            Imported into {environments.find((e) => e.key === importing.variables.key)?.name}: {list('created', answer.created)};{' '}
            {list('updated', answer.updated)}; {list('unchanged', answer.unchanged)}
            {answer.segments.length > 0 && `; segments created or changed: ${answer.segments.join(', ')}`}.
          </p>
        )}
      </form>
    </Section>
  );
}
