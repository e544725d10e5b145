import { useMutation } from '@tanstack/react-query';
import { type ChangeEvent, type FormEvent, useId, useState } from 'react';
import { api, type Environment } from '../api.ts';
import { Button, ErrorMessage, plural, Section, Select, TextArea, toast } from '../ui/index.ts';
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

/** The client's check of a definition: JSON, an object with "flags". */
function definitionProblem(text: string): string | undefined {
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return `Not valid JSON: ${(e as Error).message}`;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !('flags' in body))
    return 'A flagd definition is a JSON object with "flags" (and optionally "$evaluators")';
  return undefined;
}

export function FlagdTransfer({ projectKey, environments }: { projectKey: string; environments: Environment[] }) {
  const canWrite = useCanWrite();
  const [envKey, setEnvKey] = useState('');
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const fileId = useId();
  const env = environments.find((e) => e.key === envKey) ?? environments[0];
  const importing = useMutation({
    mutationFn: ({ key, body }: { key: string; body: unknown }) => api<ImportAnswer>('PUT', flagdPath(projectKey, key), body),
    // An import writes flags (and segments) of the project.
    meta: {
      error: false,
      invalidates: [['flags', projectKey], ['segments', projectKey], ['compare', projectKey], ['stale-flags', projectKey], ['audit']],
    },
    onSuccess: (answer, { key }) => {
      const name = environments.find((e) => e.key === key)?.name ?? key;
      toast.success(`Imported into ${name}: ${plural(answer.created.length + answer.updated.length, 'flag')} created or changed`);
    },
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
    const wrong = definitionProblem(text);
    setProblem(wrong);
    if (wrong) return;
    importing.mutate({ key: env.key, body: JSON.parse(text) as unknown });
  };
  const answer = importing.data;
  return (
    <Section title="flagd definitions">
      <p className="muted">
        flagd's flag definition is OpenFeature's declarative format: flagd and its in-process providers evaluate an exported definition as Flagpost does. An
        import creates or updates each flag it holds in that environment (a flag new to the project starts off in the other environments) and leaves the other
        flags alone; an invalid file changes nothing.
      </p>
      <Select label="Environment for flagd" value={env?.key ?? ''} onChange={setEnvKey}>
        {environments.map((e) => (
          <option key={e.key} value={e.key}>
            {e.name}
          </option>
        ))}
      </Select>
      {env && (
        <p>
          <a className="button" href={`/admin/v1${flagdPath(projectKey, env.key)}`} download={`flagd-${projectKey}-${env.key}.json`}>
            Download flagd definition of {env.name}
          </a>
        </p>
      )}
      <form onSubmit={submit} aria-label="Import a flagd definition">
        <div className="field">
          <label htmlFor={fileId}>flagd file to import</label>
          <input id={fileId} type="file" accept="application/json,.json" onChange={readFile} />
        </div>
        <TextArea label="Or paste a flagd definition (JSON)" value={text} onChange={setText} rows={8} validate={definitionProblem} />
        {problem && (
          <div role="alert" className="error">
            <p>{problem}</p>
          </div>
        )}
        <ErrorMessage error={importing.error} />
        <Button type="submit" variant="primary" busy={importing.isPending} busyText="Importing…" disabled={!canWrite || text.trim() === ''}>
          {`Import into ${env?.name ?? ''}`}
        </Button>
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
