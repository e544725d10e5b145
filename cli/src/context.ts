import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { CliError, ExitCode } from './errors.ts';

// Which branch, repository and project the references belong to: given settings first, then the CI
// system's variables (GitHub Actions, GitLab CI), then the git checkout itself.

export const LIMITS = { branch: 255, projectName: 150, repositoryUrl: 255 } as const;

export type Env = Record<string, string | undefined>;

export interface RepoContext {
  branch?: string;
  repositoryUrl?: string;
  projectName?: string;
}

export interface ResolvedContext {
  branch: string;
  projectName: string;
  repositoryUrl?: string;
  /** Where each value came from ("flag/config", "GitHub Actions", "GitLab CI", "git", "directory"). */
  sources: { branch: string; projectName: string; repositoryUrl?: string };
  warnings: string[];
}

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/** GitHub Actions: the head branch of a pull request, else the ref that triggered the run. */
export function detectGitHub(env: Env): RepoContext | undefined {
  if (env.GITHUB_ACTIONS !== 'true') return undefined;
  const repository = value(env, 'GITHUB_REPOSITORY');
  const server = value(env, 'GITHUB_SERVER_URL') ?? 'https://github.com';
  return {
    branch: value(env, 'GITHUB_HEAD_REF') ?? value(env, 'GITHUB_REF_NAME'),
    repositoryUrl: repository ? `${server.replace(/\/+$/, '')}/${repository}` : undefined,
    projectName: repository?.split('/').pop() || undefined,
  };
}

/** GitLab CI: the branch or tag of the pipeline, the project's web address and its name. */
export function detectGitLab(env: Env): RepoContext | undefined {
  if (env.GITLAB_CI !== 'true') return undefined;
  return {
    branch: value(env, 'CI_COMMIT_REF_NAME'),
    repositoryUrl: value(env, 'CI_PROJECT_URL'),
    projectName: value(env, 'CI_PROJECT_NAME'),
  };
}

export type GitRunner = (args: string[]) => string | undefined;

/** Runs git in `dir`; undefined when git is missing, `dir` is no checkout, or the command fails. */
export function gitIn(dir: string, env: Env): GitRunner {
  return (args) => {
    try {
      const out = execFileSync('git', ['-C', dir, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...env, GIT_TERMINAL_PROMPT: '0' },
        timeout: 10_000,
      }).trim();
      return out === '' ? undefined : out;
    } catch {
      return undefined;
    }
  };
}

/**
 * The branch of a checkout. On a detached HEAD (what most CI systems check out), the local branch whose
 * tip is exactly HEAD (`git name-rev --refs=refs/heads/*`), else the remote-tracking branch whose tip is
 * HEAD, without its remote's name; else the short commit SHA. A name-rev answer such as "main~2" (HEAD is
 * an ancestor of main, not its tip) is not taken: those references are not main's.
 */
export function gitBranch(git: GitRunner): string | undefined {
  const head = git(['rev-parse', '--abbrev-ref', 'HEAD']);
  if (head !== undefined && head !== 'HEAD') return head;
  if (git(['rev-parse', '--verify', '--quiet', 'HEAD']) === undefined) return undefined;
  const exact = (name: string | undefined) => (name !== undefined && name !== 'undefined' && !/[~^]/.test(name) ? name : undefined);
  const local = exact(git(['name-rev', '--name-only', '--no-undefined', '--refs=refs/heads/*', 'HEAD']));
  if (local !== undefined) return local.replace(/^heads\//, '');
  const remote = exact(git(['name-rev', '--name-only', '--no-undefined', '--refs=refs/remotes/*', '--exclude=refs/remotes/*/HEAD', 'HEAD']));
  if (remote !== undefined) {
    // "remotes/origin/feature/x" or "origin/feature/x": drop "remotes/" and the remote's name.
    const parts = remote.replace(/^remotes\//, '').split('/');
    if (parts.length > 1) return parts.slice(1).join('/');
  }
  return git(['rev-parse', '--short', 'HEAD']);
}

/**
 * A remote's address as a web address: credentials removed, scp-style `git@host:a/b.git` and
 * `ssh://git@host/a/b.git` turned into `https://host/a/b`, the `.git` suffix dropped. Undefined for
 * what is no web address (a local path, file://).
 */
export function normalizeRemoteUrl(remote: string): string | undefined {
  const trimmed = remote.trim();
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(trimmed);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    return `https://${scp[1]}/${scp[2]!.replace(/^\/+/, '').replace(/\.git\/?$/, '')}`;
  }
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (!['http:', 'https:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:'].includes(url.protocol)) return undefined;
  const pathname = url.pathname.replace(/\.git\/?$/, '').replace(/\/+$/, '');
  if (pathname === '') return undefined;
  // The web address is https, whatever the transport; the ssh port is no web port.
  const keepPort = url.protocol === 'http:' || url.protocol === 'https:' ? url.port : '';
  const scheme = url.protocol === 'http:' ? 'http' : 'https';
  return `${scheme}://${url.hostname}${keepPort ? `:${keepPort}` : ''}${pathname}`;
}

/** The checkout's origin as a web address. */
export function gitRepositoryUrl(git: GitRunner): string | undefined {
  const remote = git(['remote', 'get-url', 'origin']) ?? git(['config', '--get', 'remote.origin.url']);
  return remote === undefined ? undefined : normalizeRemoteUrl(remote);
}

/** The last segment of a repository address, without `.git`. */
export function nameFromUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const last = url
    .replace(/\.git\/?$/, '')
    .replace(/\/+$/, '')
    .split(/[/:]/)
    .pop();
  return last === undefined || last === '' ? undefined : last;
}

export interface ResolveOptions {
  /** Values from flags, the environment or the configuration files; they win. */
  given: RepoContext;
  env: Env;
  dir: string;
  git?: GitRunner;
}

/** Each value from the first place that has it: given, GitHub Actions, GitLab CI, git, the directory. */
export function resolveContext({ given, env, dir, git = gitIn(dir, env) }: ResolveOptions): ResolvedContext {
  const candidates: Array<[string, () => RepoContext | undefined]> = [
    ['given', () => given],
    ['GitHub Actions', () => detectGitHub(env)],
    ['GitLab CI', () => detectGitLab(env)],
  ];
  const cache = new Map<string, RepoContext | undefined>();
  const pick = (key: keyof RepoContext): [string, string] | undefined => {
    for (const [name, get] of candidates) {
      if (!cache.has(name)) cache.set(name, get());
      const v = cache.get(name)?.[key];
      if (v !== undefined && v !== '') return [v, name];
    }
    return undefined;
  };
  const warnings: string[] = [];

  const branch = pick('branch') ?? withSource(gitBranch(git), 'git');
  if (branch === undefined) {
    throw new CliError(ExitCode.usage, `Cannot tell the branch: ${dir} is not a git checkout (or git is missing); pass --branch or set FLAGPOST_SCAN_BRANCH`);
  }
  const repositoryUrl0 = pick('repositoryUrl') ?? withSource(gitRepositoryUrl(git), 'git');
  const projectName =
    pick('projectName') ??
    withSource(nameFromUrl(repositoryUrl0?.[0]), `${repositoryUrl0?.[1]} (repository URL)`) ??
    withSource(path.basename(git(['rev-parse', '--show-toplevel']) ?? path.resolve(dir)), 'directory')!;
  let repositoryUrl = repositoryUrl0;

  check('branch', branch, LIMITS.branch);
  check('projectName', projectName, LIMITS.projectName);
  if (repositoryUrl !== undefined && repositoryUrl[0].length > LIMITS.repositoryUrl) {
    if (repositoryUrl[1] === 'given') check('repositoryUrl', repositoryUrl, LIMITS.repositoryUrl);
    warnings.push(`The repository URL from ${repositoryUrl[1]} is longer than ${LIMITS.repositoryUrl} characters; it is left out of the upload`);
    repositoryUrl = undefined;
  }
  return {
    branch: branch[0],
    projectName: projectName[0],
    ...(repositoryUrl ? { repositoryUrl: repositoryUrl[0] } : {}),
    sources: { branch: branch[1], projectName: projectName[1], ...(repositoryUrl ? { repositoryUrl: repositoryUrl[1] } : {}) },
    warnings,
  };
}

function withSource(v: string | undefined, source: string): [string, string] | undefined {
  return v === undefined || v === '' ? undefined : [v, source];
}

function check(name: string, [v, source]: [string, string], max: number): void {
  if (v.length > max) {
    const hint =
      source === 'given'
        ? ''
        : ` (detected from ${source}; pass --${name === 'projectName' ? 'project-name' : name === 'branch' ? 'branch' : 'repository-url'})`;
    throw new CliError(ExitCode.usage, `The ${name} is ${v.length} characters long; Flagpost accepts at most ${max}${hint}`);
  }
}
