import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describePlan, type PlanStep, type ProposedChangeRequest } from '../documents/index.ts';

// The command-line side of flags as code (issue 21): `export` and `apply` talk to a running Flagpost
// through the admin API (FLAGPOST_URL, FLAGPOST_TOKEN: a personal access token), so that they work from
// CI against a remote server. A file whose name ends in .yaml or .yml is YAML, any other JSON.

export interface RemoteOptions {
  /** Base URL of the Flagpost server, e.g. https://flags.example.com */
  url: string;
  token: string;
  out: (text: string) => void;
  /** Where `apply` resolves the `$NAME` references of a document's form secrets (the process environment). */
  env?: NodeJS.ProcessEnv;
}

/** A secret's reference in a document's forms (forms/form-document.ts SECRET_REFERENCE). */
const SECRET_REFERENCE = /^\$([A-Z_][A-Z0-9_]{0,127})$/;

/**
 * Replaces the `$NAME` references of form secrets (`captcha.secret`, `slackWebhookUrl`,
 * `discordWebhookUrl`) with the values `env` holds, so that secrets live in the environment of CI, never
 * in the file; a reference `env` does not hold is sent as it is, and the server keeps the stored secret.
 * Returns the names resolved.
 */
export function resolveFormSecrets(document: unknown, env: NodeJS.ProcessEnv): string[] {
  const resolved: string[] = [];
  const forms = (document as { forms?: unknown } | null)?.forms;
  if (forms === null || typeof forms !== 'object') return resolved;
  const resolve = (holder: Record<string, unknown>, field: string) => {
    const value = holder[field];
    const name = typeof value === 'string' ? SECRET_REFERENCE.exec(value)?.[1] : undefined;
    if (name === undefined || env[name] === undefined || env[name] === '') return;
    holder[field] = env[name];
    resolved.push(name);
  };
  for (const form of Object.values(forms as Record<string, unknown>)) {
    if (form === null || typeof form !== 'object') continue;
    const settings = form as Record<string, unknown>;
    resolve(settings, 'slackWebhookUrl');
    resolve(settings, 'discordWebhookUrl');
    if (settings.captcha !== null && typeof settings.captcha === 'object') resolve(settings.captcha as Record<string, unknown>, 'secret');
  }
  return resolved;
}

export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

/** The server and credential of the remote commands, from the environment. */
export function remoteOptions(env: NodeJS.ProcessEnv, out: (text: string) => void): RemoteOptions {
  const token = env.FLAGPOST_TOKEN;
  if (!token)
    throw new CommandError('Set FLAGPOST_TOKEN to a personal access token (dashboard: Account, access tokens) of a member who may change the project.', 2);
  const url = env.FLAGPOST_URL ?? `http://127.0.0.1:${env.PORT ?? '3000'}`;
  try {
    new URL(url);
  } catch {
    throw new CommandError(`FLAGPOST_URL is not a URL: ${url}`, 2);
  }
  return { url: url.replace(/\/+$/, ''), token, out, env };
}

const isYaml = (file: string) => /\.ya?ml$/i.test(file);

/** Serialises a document the same way every time: keys in the server's order, 2-space indentation. */
export function formatDocument(doc: unknown, file: string): string {
  return isYaml(file) ? YAML.stringify(doc, { lineWidth: 0 }) : `${JSON.stringify(doc, null, 2)}\n`;
}

export function parseDocument(text: string, file: string): unknown {
  try {
    return isYaml(file) ? YAML.parse(text) : JSON.parse(text);
  } catch (error) {
    throw new CommandError(`${file} is not valid ${isYaml(file) ? 'YAML' : 'JSON'}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
}

/** One admin API call; a refusal becomes a CommandError with the server's message and field problems. */
export async function adminCall(options: RemoteOptions, method: 'GET' | 'POST', route: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${options.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new CommandError(
      `Cannot reach Flagpost at ${options.url}: ${error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)}`,
      1,
    );
  }
  const text = await res.text();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new CommandError(`Flagpost at ${options.url} answered ${res.status} without JSON`, 1);
  }
  if (!res.ok) {
    const { message, details } = answer as { message?: string; details?: Array<{ field: string; reason: string }> };
    const lines = (details ?? []).map((d) => `  ${d.field}: ${d.reason}`);
    throw new CommandError([`Flagpost answered ${res.status}: ${message ?? text}`, ...lines].join('\n'), 1);
  }
  return answer;
}

/** `export <projectKey> <file>`: writes the project's document. */
export async function exportCommand(args: string[], options: RemoteOptions): Promise<void> {
  const [projectKey, file] = args;
  if (!projectKey || !file || args.length > 2) throw new CommandError('export needs a project key and a file name.', 2);
  const doc = await adminCall(options, 'GET', `/admin/v1/projects/${encodeURIComponent(projectKey)}/document`);
  fs.writeFileSync(file, formatDocument(doc, file));
  const { flags, segments, forms } = doc as { flags: object; segments: object; forms?: object };
  // Forms (issue 34) are named only when the project has any, so that the line is as before for the others.
  const withForms = forms ? `, ${Object.keys(forms).length} forms (secrets as $NAME references)` : '';
  options.out(
    `Exported project ${projectKey} to ${path.resolve(file)}: ${Object.keys(flags).length} flags, ${Object.keys(segments).length} segments${withForms}.\n`,
  );
}

/**
 * `apply <file> [--dry-run] [--project <projectKey>] [--bypass-protection]`: makes the project match the
 * document (protected environments get a change request each), or prints what it would change.
 */
export async function applyCommand(args: string[], options: RemoteOptions): Promise<void> {
  const rest = [...args];
  const dryRun = takeFlag(rest, '--dry-run');
  const bypass = takeFlag(rest, '--bypass-protection');
  const projectKey = takeOption(rest, '--project');
  const [file] = rest;
  if (!file || rest.length > 1)
    throw new CommandError('apply needs one file name, and optionally --dry-run, --project <projectKey> and --bypass-protection.', 2);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new CommandError(`Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
  const document = parseDocument(text, file);
  resolveFormSecrets(document, options.env ?? {});
  const body = { document, dryRun, source: path.basename(file).slice(0, 120), ...(projectKey ? { projectKey } : {}) };
  const result = (await adminCall(options, 'POST', `/admin/v1/documents/apply${bypass ? '?bypassProtection=true' : ''}`, body)) as {
    projectKey: string | null;
    changes: PlanStep[];
    changeRequests: ProposedChangeRequest[];
  };
  const lines = describePlan(result.changes)
    .map((l) => `  ${l}\n`)
    .join('');
  const requests = describeChangeRequests(result.changeRequests, dryRun, options.url);
  const count = result.changes.filter((c) => c.action !== 'keep').length;
  const target = result.projectKey ?? '(new)';
  const proposes = result.changeRequests.some((r) => r.outcome !== 'left_open');
  if (count === 0 && !proposes) options.out(`Project ${target} already matches ${file}.\n${lines}${requests}`);
  else if (count === 0) options.out(`${dryRun ? 'Dry run: applying' : 'Applied'} ${file} to project ${target}: no direct change.\n${lines}${requests}`);
  else if (dryRun) options.out(`Dry run: applying ${file} to project ${target} would make ${count} change(s):\n${lines}${requests}`);
  else options.out(`Applied ${file} to project ${target}: ${count} change(s):\n${lines}${requests}`);
}

/** The change requests of protected environments, as the commands print them (with the dashboard's address of each). */
export function describeChangeRequests(requests: readonly ProposedChangeRequest[], dryRun: boolean, url: string): string {
  return requests
    .map((r) => {
      const n = r.changes.length;
      const at = `${url}${r.dashboardPath ?? ''}`;
      const heads: Record<ProposedChangeRequest['outcome'], string> = {
        opened: dryRun
          ? `${r.environment} is protected: a change request would be opened with ${n} change(s):`
          : `${r.environment} is protected: change request ${r.id} opened with ${n} change(s), waiting for review at ${at}`,
        updated: dryRun
          ? `${r.environment} is protected: change request ${r.id} would be updated to ${n} change(s), its approvals reset, at ${at}`
          : `${r.environment} is protected: change request ${r.id} updated to ${n} change(s), its approvals reset, waiting for review at ${at}`,
        unchanged: `${r.environment} is protected: change request ${r.id} already proposes these ${n} change(s), at ${at}`,
        left_open: `${r.environment}: the document changes nothing there, and change request ${r.id} of an earlier apply is left open, at ${at}`,
      };
      return [heads[r.outcome], ...describePlan(r.changes).map((l) => `  ${l}`)].map((l) => `${l}\n`).join('');
    })
    .join('');
}

export function takeFlag(args: string[], name: string): boolean {
  const at = args.indexOf(name);
  if (at === -1) return false;
  args.splice(at, 1);
  return true;
}

export function takeOption(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  if (at === -1) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) throw new CommandError(`${name} needs a value.`, 2);
  args.splice(at, 2);
  return value;
}
