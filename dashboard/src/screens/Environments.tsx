import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { api, type ApiKey, type FlagEntry } from '../api.ts';
import {
  Badge,
  Button,
  ConfirmDialog,
  CopyButton,
  DateText,
  EmptyState,
  ErrorMessage,
  Field,
  Loading,
  problemsOf,
  ProblemsProvider,
  rules,
  Section,
  Select,
  Table,
  toast,
} from '../ui/index.ts';
import { useCanWrite } from '../session.ts';
import { FlagdSyncTokens } from './FlagdSync.tsx';
import { ProjectHeader, useProject } from './Projects.tsx';
import { FlagdTransfer } from './FlagdTransfer.tsx';
import { DeleteEnvironment, ProjectSettings } from './ProjectSettings.tsx';

export function EnvironmentsScreen({ params }: { params: { key: string } }) {
  const canWrite = useCanWrite();
  const project = useProject(params.key);
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api('POST', `/projects/${encodeURIComponent(params.key)}/environments`, { name: name.trim() }),
    meta: { success: 'Created the environment', error: false, invalidates: [['project', params.key], ['projects'], ['flags', params.key], ['audit']] },
    onSuccess: () => setName(''),
  });
  const [snippetEnv, setSnippetEnv] = useState<string | undefined>();
  const flags = useQuery({
    queryKey: ['flags', params.key],
    queryFn: () => api<{ flags: FlagEntry[] }>('GET', `/projects/${encodeURIComponent(params.key)}/flags`),
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorMessage error={project.error} />;
  const environments = project.data.environments;
  const chosen = environments.find((e) => e.key === snippetEnv) ?? environments[environments.length - 1];
  // A flag that exists (the first of the project), read in a way that runs as pasted in an ES module
  // and in CommonJS alike: the SDK is an ES module, so it is loaded with import() in an async function.
  const slug = flags.data?.flags[0]?.slug;
  const snippet = `// npm install @basestack/flags-js — runs as is in ES modules and in CommonJS (.js, .mjs, .cjs)
async function main() {
  const { FlagsSDK } = await import('@basestack/flags-js');
  const sdk = new FlagsSDK({
    baseURL: '${window.location.origin}/v1',
    projectKey: '${project.data.key}',
    environmentKey: '${chosen?.key ?? ''}',
  });
  const flag = await sdk.getFlag('${slug ?? 'my-flag'}');
  console.log('${slug ?? 'my-flag'} is', flag.enabled ? 'on' : 'off', 'in ${chosen?.name ?? ''}');
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});`;
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
        <Table label="Environments">
          <thead>
            <tr>
              <th scope="col">Environment</th>
              <th scope="col">Environment key</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {environments.map((e) => (
              <tr key={e.key}>
                <th scope="row">{e.name}</th>
                <td>
                  <code>{e.key}</code> <CopyButton text={e.key} label={`Copy key of ${e.name}`} />
                </td>
                <td>
                  <DateText iso={e.createdAt} />
                </td>
                <td>
                  <DeleteEnvironment project={project.data} environment={e} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
        <ProblemsProvider value={problemsOf(create.error)}>
          <form onSubmit={submit} className="inline" aria-label="New environment">
            <Field
              label="Environment name"
              path="name"
              value={name}
              onChange={setName}
              validate={rules.required}
              required
              hint="Gets every flag of the project, switched off"
            />
            <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…" disabled={!canWrite}>
              Create environment
            </Button>
          </form>
        </ProblemsProvider>
        <ErrorMessage error={create.error} inline={['name']} />
      </Section>
      <Section title="Use it in your app">
        <Select label="Environment for the snippet" value={chosen?.key ?? ''} onChange={setSnippetEnv}>
          {environments.map((e) => (
            <option key={e.key} value={e.key}>
              {e.name}
            </option>
          ))}
        </Select>
        <pre tabIndex={0}>
          <code>{snippet}</code>
        </pre>
        <CopyButton text={snippet} label="Copy snippet" />
        {flags.data && !slug && <p className="muted">This project has no flag yet: the snippet reads my-flag, which answers 404 until you create it.</p>}
        <p className="muted">
          With npm: <code>npm install @basestack/flags-js</code>. OpenFeature providers use the OFREP endpoints with the same keys (docs/api.md). A flag
          switched off entirely (DISABLED) gives OpenFeature callers their default value; the OFREP provider on npm (0.1.3) reports that as an error (GENERAL),
          not as DISABLED.
        </p>
      </Section>
      <FlagdSyncTokens projectKey={params.key} environments={environments} />
      <ApiKeys projectKey={params.key} />
      <FlagdTransfer projectKey={params.key} environments={environments} />
      <ProjectSettings project={project.data} />
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
    meta: { success: 'Created the API key', error: false, invalidates: [['api-keys', projectKey], ['audit']] },
    onSuccess: (key) => {
      setCreated(key);
      setName('');
    },
  });
  const [revoking, setRevoking] = useState<ApiKey | undefined>();
  const revoke = useMutation({
    mutationFn: (id: string) => api('DELETE', `/projects/${encodeURIComponent(projectKey)}/api-keys/${encodeURIComponent(id)}`),
    meta: { error: false, invalidates: [['api-keys', projectKey], ['audit']] },
    onSuccess: () => {
      toast.success(`Revoked API key ${revoking?.name ?? ''}`);
      setRevoking(undefined);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!rules.required(name)) create.mutate();
  };
  return (
    <Section title="API keys">
      <p className="muted">API keys let CI upload code references (POST /v1/flags/code-refs). A token is shown once, when it is created.</p>
      <ProblemsProvider value={problemsOf(create.error)}>
        <form onSubmit={submit} className="inline" aria-label="Create an API key">
          <Field label="API key name" path="name" value={name} onChange={setName} validate={rules.required} required />
          <Button type="submit" variant="primary" busy={create.isPending} busyText="Creating…" disabled={!canWrite}>
            Create API key
          </Button>
        </form>
      </ProblemsProvider>
      <ErrorMessage error={create.error} inline={['name']} />
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
      <ErrorMessage error={keys.error} />
      <ConfirmDialog
        open={revoking !== undefined}
        title={`Revoke API key ${revoking?.name ?? ''}?`}
        confirmLabel="Revoke API key"
        pendingLabel="Revoking…"
        onConfirm={() => revoking && revoke.mutate(revoking.id)}
        onCancel={() => {
          revoke.reset();
          setRevoking(undefined);
        }}
        pending={revoke.isPending}
        error={revoke.error}
      >
        <p>Whatever uses it (CI uploading code references) is refused from now on. This cannot be undone.</p>
      </ConfirmDialog>
      {keys.data && keys.data.apiKeys.length === 0 && <EmptyState title="No API key">Create one for the CI job that uploads code references.</EmptyState>}
      {keys.data && keys.data.apiKeys.length > 0 && (
        <Table label="API keys">
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
                <td>
                  <DateText iso={k.createdAt} />
                </td>
                <td>
                  {k.revokedAt ? (
                    <Badge tone="muted">
                      Revoked <DateText iso={k.revokedAt} />
                    </Badge>
                  ) : (
                    <Button size="small" variant="danger-text" disabled={revoke.isPending || !canWrite} onClick={() => setRevoking(k)}>
                      Revoke {k.name}
                    </Button>
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
