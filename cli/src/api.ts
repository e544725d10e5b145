import { CliError, ExitCode } from './errors.ts';

// The two calls to Flagpost: the environment's flags (GET {apiUrl}/flags) and the upload
// (POST {apiUrl}/flags/code-refs). Every failure is exit code 3 with the server's own message.

export interface FlagInfo {
  slug: string;
  expiredAt: string | null;
}

export interface ApiTarget {
  apiUrl: string;
  projectKey: string;
  environmentKey: string;
}

export type Fetch = typeof fetch;

const LIST_TIMEOUT_MS = 30_000;
const UPLOAD_TIMEOUT_MS = 120_000;

/** The header that makes an upload the complete set of (projectName, branch). */
export const SCOPE_HEADER = 'x-flagpost-scope';

async function call(fetchImpl: Fetch, url: string, init: RequestInit, timeoutMs: number): Promise<{ status: number; headers: Headers; text: string }> {
  let response: Response;
  try {
    response = await fetchImpl(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (error as Error).message);
    throw new CliError(ExitCode.server, `Could not reach Flagpost: ${init.method ?? 'GET'} ${url} failed (${reason})`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new CliError(ExitCode.server, `${init.method ?? 'GET'} ${url}: the answer broke off (${(error as Error).message})`);
  }
  return { status: response.status, headers: response.headers, text };
}

/** The server's `message` of an error answer, or the start of whatever it sent. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message.replace(/\.$/, '');
  } catch {
    // Not JSON: a proxy's page, say.
  }
  const plain = text.replace(/\s+/g, ' ').trim();
  return plain === '' ? '(empty answer)' : plain.slice(0, 200);
}

function failure(method: string, url: string, status: number, headers: Headers, text: string, hint = ''): CliError {
  const retry = status === 429 && headers.get('retry-after') ? ` Retry after ${headers.get('retry-after')} s.` : '';
  return new CliError(ExitCode.server, `Flagpost answered ${status} to ${method} ${url}: ${errorMessage(text)}.${retry}${hint}`);
}

const keyHeaders = (target: ApiTarget) => ({ 'x-project-key': target.projectKey, 'x-environment-key': target.environmentKey });

/** Every flag of the environment (slug and expiry). */
export async function fetchFlags(target: ApiTarget, fetchImpl: Fetch = fetch): Promise<FlagInfo[]> {
  const url = `${target.apiUrl}/flags`;
  const { status, headers, text } = await call(
    fetchImpl,
    url,
    { method: 'GET', headers: { accept: 'application/json', ...keyHeaders(target) } },
    LIST_TIMEOUT_MS,
  );
  if (status !== 200) {
    const hint = status === 404 && !/environment/i.test(text) ? ' Is the API URL the base of the flag interface, such as http://localhost:3000/v1?' : '';
    throw failure('GET', url, status, headers, text, hint);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliError(
      ExitCode.server,
      `GET ${url} answered 200 without JSON; is the API URL the base of the flag interface, such as http://localhost:3000/v1?`,
    );
  }
  const flags = (body as { flags?: unknown }).flags;
  if (!Array.isArray(flags)) throw new CliError(ExitCode.server, `GET ${url} answered 200 without a "flags" list; is this a Flagpost (or Basestack) server?`);
  return flags
    .filter((f): f is { slug: string; expiredAt?: unknown } => typeof f === 'object' && f !== null && typeof (f as { slug?: unknown }).slug === 'string')
    .map((f) => ({ slug: f.slug, expiredAt: typeof f.expiredAt === 'string' ? f.expiredAt : null }));
}

export interface UploadTarget extends ApiTarget {
  apiKey: string;
}

/** Sends the serialized body in one request; answers the server's success message. */
export async function uploadReferences(target: UploadTarget, body: string, fetchImpl: Fetch = fetch): Promise<string> {
  const url = `${target.apiUrl}/flags/code-refs`;
  const { status, headers, text } = await call(
    fetchImpl,
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...keyHeaders(target), 'x-api-key': target.apiKey, [SCOPE_HEADER]: 'branch' },
      body,
    },
    UPLOAD_TIMEOUT_MS,
  );
  if (status === 201) {
    try {
      const answer = JSON.parse(text) as { message?: unknown };
      return typeof answer.message === 'string' ? answer.message : 'stored';
    } catch {
      return 'stored';
    }
  }
  if (status === 413) {
    throw new CliError(
      ExitCode.limit,
      `Flagpost refused the upload as too large (413, ${Buffer.byteLength(body)} bytes): ${errorMessage(text)}. Nothing was stored. ` +
        `Lower --max-line-length, leave files out with .flagpostignore, or raise the server's FLAGPOST_BODY_LIMIT_BYTES ` +
        `(and --max-upload-bytes with it).`,
    );
  }
  const hint =
    status === 400 && Buffer.byteLength(body) > 1024 * 1024
      ? ` The body is ${Buffer.byteLength(body)} bytes; a body over the server's limit (FLAGPOST_BODY_LIMIT_BYTES) can be refused this way.`
      : '';
  throw failure('POST', url, status, headers, text, hint);
}
