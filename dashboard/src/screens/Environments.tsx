import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api, type ApiKey } from '../api.ts';
import { CopyButton, ErrorMessage, Field, formatDate, Loading, Section, Table } from '../ui.tsx';
import { useCanWrite } from '../session.ts';
import { FlagdSyncTokens } from './FlagdSync.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';
import { FlagdTransfer } from './FlagdTransfer.tsx';

export function EnvironmentsScreen({ params }: { params: { key: string } }) {
  const canWrite = useCanWrite();
  const project = useProject(params.key);
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api('POST', `/projects/${encodeURIComponent(params.key)}/environments`, { name: name.trim() }),
    onSuccess: () => setName(''),
  });
  const [snippetEnv, setSnippetEnv] = useState<string | undefined>();
  const selectId = useId();
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const environments = project.data.environments;
  const chosen = environments.find((e) => e.key === snippetEnv) ?? environments[environments.length - 1];
  const snippet = `import { FlagsSDK } from '@basestack/flags-js';

const sdk = new FlagsSDK({
  baseURL: '${window.location.origin}/v1',
  projectKey: '${project.data.key}',
  environmentKey: '${chosen?.key ?? ''}',
});

const flag = await sdk.getFlag('my-flag');
if (flag.enabled) {
  // the feature is on in ${chosen?.name ?? ''}
}`;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <>
      <ProjectHeader project={project.data} current="environments" />
      <Section title="Keys">
        <p>
          Project key <code>{project.data.key}</code> <CopyButton text={project.data.key} label="Copy project key" />
        </p>
        <Table>
          <thead>
            <tr>
              <th scope="col">Environment</th>
              <th scope="col">Environment key</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {environments.map((e) => (
              <tr key={e.key}>
                <th scope="row">{e.name}</th>
                <td>
                  <code>{e.key}</code> <CopyButton text={e.key} label={`Copy key of ${e.name}`} />
                </td>
                <td>{formatDate(e.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </Table>
        <form onSubmit={submit} className="inline">
          <Field label="Environment name" value={name} onChange={setName} required hint="Gets every flag of the project, switched off" />
          <button type="submit" className="primary" disabled={create.isPending || !canWrite}>
            {create.isPending ? 'Creating…' : 'Create environment'}
          </button>
        </form>
        <ErrorMessage error={create.error} />
      </Section>
      <Section title="Use it in your app">
        <div className="field">
          <label htmlFor={selectId}>Environment for the snippet</label>
          <select id={selectId} value={chosen?.key} onChange={(e) => setSnippetEnv(e.target.value)}>
            {environments.map((e) => (
              <option key={e.key} value={e.key}>
                {e.name}
              </option>
            ))}
          </select>
        </div>
        <pre>
          <code>{snippet}</code>
        </pre>
        <CopyButton text={snippet} label="Copy snippet" />
        <p className="muted">
          With npm: <code>npm install @basestack/flags-js</code>. OpenFeature providers use the OFREP endpoints with the same keys (docs/api.md).
        </p>
      </Section>
      <FlagdSyncTokens projectKey={params.key} environments={environments} />
      <ApiKeys projectKey={params.key} />
      <FlagdTransfer projectKey={params.key} environments={environments} />
    </>
  );
}

function ApiKeys({ projectKey }: { projectKey: string }) {
  const canWrite = useCanWrite();
  const keys = useQuery({
    queryKey: ['api-keys', projectKey],
    queryFn: () => api<{ apiKeys: ApiKey[] }>('GET', `/projects/${encodeURIComponent(projectKey)}/api-keys`),
  });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<ApiKey | undefined>();
  const tokenId = useId();
  const create = useMutation({
    mutationFn: () => api<ApiKey>('POST', `/projects/${encodeURIComponent(projectKey)}/api-keys`, { name: name.trim() }),
    onSuccess: (key) => {
      setCreated(key);
      setName('');
    },
  });
  const revoke = useMutation({ mutationFn: (id: string) => api('DELETE', `/projects/${encodeURIComponent(projectKey)}/api-keys/${encodeURIComponent(id)}`) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <Section title="API keys">
      <p className="muted">API keys let CI upload code references (POST /v1/flags/code-refs). A token is shown once, when it is created.</p>
      <form onSubmit={submit} className="inline">
        <Field label="API key name" value={name} onChange={setName} required />
        <button type="submit" className="primary" disabled={create.isPending || !canWrite}>
          {create.isPending ? 'Creating…' : 'Create API key'}
        </button>
      </form>
      <ErrorMessage error={create.error} />
      {created?.token && (
        <div className="notice" role="status">
          <div className="field">
            <label htmlFor={tokenId}>New API key</label>
            <input id={tokenId} readOnly value={created.token} />
          </div>
          <CopyButton text={created.token} label="Copy API key" /> <strong>Shown once:</strong> store it now.
        </div>
      )}
      {keys.isPending && <Loading what="API keys" />}
      <ErrorMessage error={keys.error ?? revoke.error} />
      {keys.data && keys.data.apiKeys.length > 0 && (
        <Table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.apiKeys.map((k) => (
              <tr key={k.id}>
                <th scope="row">{k.name}</th>
                <td>
                  <code>{k.prefix}</code>
                </td>
                <td>{formatDate(k.createdAt)}</td>
                <td>
                  {k.revokedAt ? (
                    `Revoked ${formatDate(k.revokedAt)}`
                  ) : (
                    <button type="button" className="small danger-text" disabled={revoke.isPending || !canWrite} onClick={() => revoke.mutate(k.id)}>
                      Revoke {k.name}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  );
}
