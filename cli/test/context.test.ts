import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { detectGitHub, detectGitLab, gitBranch, gitIn, nameFromUrl, normalizeRemoteUrl, resolveContext } from '../src/context.ts';
import { CliError } from '../src/errors.ts';
import { cleanEnv, commitAll, git, initRepo, tmpDir, write } from './support.ts';

const GITHUB_PUSH = {
  GITHUB_ACTIONS: 'true',
  GITHUB_REF_NAME: 'main',
  GITHUB_HEAD_REF: '',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_REPOSITORY: 'acme/web-shop',
};
const GITHUB_PR = { ...GITHUB_PUSH, GITHUB_REF_NAME: '42/merge', GITHUB_HEAD_REF: 'feature/checkout' };
const GITLAB = { GITLAB_CI: 'true', CI_COMMIT_REF_NAME: 'develop', CI_PROJECT_URL: 'https://gitlab.example.com/acme/api', CI_PROJECT_NAME: 'api' };

/** A repository with a remote and one commit on main. */
function repoWithCommit(remote?: string): string {
  const dir = tmpDir('flagpost-git-');
  write(dir, 'a.ts', 'export const a = 1;\n');
  initRepo(dir, remote);
  commitAll(dir, 'one');
  return dir;
}

const noGit = () => undefined;

describe('repository context: CI variables', () => {
  it('reads GitHub Actions: the ref of a push, the head branch of a pull request', () => {
    assert.deepEqual(detectGitHub(GITHUB_PUSH), { branch: 'main', repositoryUrl: 'https://github.com/acme/web-shop', projectName: 'web-shop' });
    assert.deepEqual(detectGitHub(GITHUB_PR), { branch: 'feature/checkout', repositoryUrl: 'https://github.com/acme/web-shop', projectName: 'web-shop' });
    assert.equal(detectGitHub({ ...GITHUB_PUSH, GITHUB_SERVER_URL: 'https://ghe.example.com/' })?.repositoryUrl, 'https://ghe.example.com/acme/web-shop');
    assert.equal(detectGitHub({ ...GITHUB_PUSH, GITHUB_ACTIONS: undefined }), undefined);
  });

  it('reads GitLab CI', () => {
    assert.deepEqual(detectGitLab(GITLAB), { branch: 'develop', repositoryUrl: 'https://gitlab.example.com/acme/api', projectName: 'api' });
    assert.equal(detectGitLab({ ...GITLAB, GITLAB_CI: undefined }), undefined);
  });

  it('prefers given values, then GitHub, then GitLab, then git, field by field', () => {
    const dir = tmpDir();
    const gh = resolveContext({ given: {}, env: GITHUB_PR, dir, git: noGit });
    assert.equal(gh.branch, 'feature/checkout');
    assert.equal(gh.projectName, 'web-shop');
    assert.equal(gh.repositoryUrl, 'https://github.com/acme/web-shop');
    assert.deepEqual(gh.sources, { branch: 'GitHub Actions', projectName: 'GitHub Actions', repositoryUrl: 'GitHub Actions' });

    const given = resolveContext({ given: { branch: 'release', projectName: 'shop' }, env: { ...GITHUB_PR, ...GITLAB }, dir, git: noGit });
    assert.equal(given.branch, 'release');
    assert.equal(given.projectName, 'shop');
    assert.equal(given.repositoryUrl, 'https://github.com/acme/web-shop');

    const gl = resolveContext({ given: {}, env: GITLAB, dir, git: noGit });
    assert.deepEqual([gl.branch, gl.projectName, gl.repositoryUrl], ['develop', 'api', 'https://gitlab.example.com/acme/api']);
  });

  it('refuses a branch or project name longer than the server accepts, and drops a long detected repository URL', () => {
    const dir = tmpDir();
    assert.throws(
      () => resolveContext({ given: {}, env: { ...GITLAB, CI_COMMIT_REF_NAME: 'b'.repeat(256) }, dir, git: noGit }),
      (e: unknown) =>
        e instanceof CliError &&
        e.exitCode === 2 &&
        /branch is 256 characters long; Flagpost accepts at most 255 \(detected from GitLab CI; pass --branch\)/.test(e.message),
    );
    assert.throws(() => resolveContext({ given: { projectName: 'p'.repeat(151) }, env: GITLAB, dir, git: noGit }), /projectName is 151 characters long/);
    const long = resolveContext({ given: {}, env: { ...GITLAB, CI_PROJECT_URL: `https://x.example/${'a'.repeat(250)}` }, dir, git: noGit });
    assert.equal(long.repositoryUrl, undefined);
    assert.match(long.warnings[0]!, /longer than 255 characters; it is left out/);
    assert.throws(() => resolveContext({ given: { repositoryUrl: 'u'.repeat(256) }, env: GITLAB, dir, git: noGit }), /repositoryUrl is 256 characters long/);
  });
});

describe('repository context: remote addresses', () => {
  it('turns remotes into web addresses without credentials', () => {
    const cases: Array<[string, string | undefined]> = [
      ['git@github.com:acme/web-shop.git', 'https://github.com/acme/web-shop'],
      ['github.com:acme/web-shop', 'https://github.com/acme/web-shop'],
      ['ssh://git@gitlab.example.com:2222/group/sub/api.git', 'https://gitlab.example.com/group/sub/api'],
      ['https://ci-bot:s3cret@git.example.com/acme/web-shop.git', 'https://git.example.com/acme/web-shop'],
      ['https://oauth2:token@gitlab.example.com:8443/a/b.git/', 'https://gitlab.example.com:8443/a/b'],
      ['http://git.local/a/b', 'http://git.local/a/b'],
      ['git://git.example.com/a/b.git', 'https://git.example.com/a/b'],
      ['/srv/git/repo.git', undefined],
      ['file:///srv/git/repo.git', undefined],
      ['../relative', undefined],
      ['https://host.example/', undefined],
    ];
    for (const [remote, expected] of cases) assert.equal(normalizeRemoteUrl(remote), expected, remote);
    assert.equal(nameFromUrl('https://github.com/acme/web-shop'), 'web-shop');
    assert.equal(nameFromUrl('git@github.com:acme/web-shop.git'), 'web-shop');
  });
});

describe('repository context: a real git checkout', () => {
  it('reads the branch, the origin (credentials stripped) and the project name from git', () => {
    const dir = repoWithCommit('https://user:pw@git.example.com/acme/Store.git');
    git(dir, 'checkout', '-q', '-b', 'feature/x');
    const context = resolveContext({ given: {}, env: cleanEnv(), dir });
    assert.deepEqual(
      { branch: context.branch, projectName: context.projectName, repositoryUrl: context.repositoryUrl },
      { branch: 'feature/x', projectName: 'Store', repositoryUrl: 'https://git.example.com/acme/Store' },
    );
    assert.deepEqual(context.sources, { branch: 'git', projectName: 'git (repository URL)', repositoryUrl: 'git' });
  });

  it('names the project after the checkout folder when there is no remote, and a subfolder scan after the checkout', () => {
    const dir = repoWithCommit();
    write(dir, 'packages/web/x.ts', '');
    const context = resolveContext({ given: {}, env: cleanEnv(), dir: path.join(dir, 'packages/web') });
    assert.equal(context.projectName, path.basename(dir));
    assert.equal(context.repositoryUrl, undefined);
    assert.equal(context.sources.projectName, 'directory');
  });

  it('on a detached HEAD at a branch tip, takes that branch (git name-rev)', () => {
    const dir = repoWithCommit();
    git(dir, 'checkout', '-q', '--detach');
    assert.equal(git(dir, 'rev-parse', '--abbrev-ref', 'HEAD'), 'HEAD');
    assert.equal(gitBranch(gitIn(dir, cleanEnv())), 'main');
  });

  it('on a detached HEAD behind every branch tip, takes the short commit SHA', () => {
    const dir = repoWithCommit();
    write(dir, 'b.ts', '');
    commitAll(dir, 'two');
    git(dir, 'checkout', '-q', '--detach', 'HEAD~1');
    const sha = git(dir, 'rev-parse', '--short', 'HEAD');
    assert.equal(gitBranch(gitIn(dir, cleanEnv())), sha);
    assert.equal(resolveContext({ given: {}, env: cleanEnv(), dir }).branch, sha);
  });

  it('on a detached HEAD at a remote-tracking branch only (a CI clone), takes that branch without the remote name', () => {
    const origin = repoWithCommit();
    git(origin, 'checkout', '-q', '-b', 'feature/pay');
    write(origin, 'c.ts', '');
    commitAll(origin, 'three');
    git(origin, 'checkout', '-q', 'main');
    const clone = tmpDir('flagpost-clone-');
    git(clone, 'clone', '-q', origin, '.');
    git(clone, 'checkout', '-q', '--detach', 'origin/feature/pay');
    assert.equal(gitBranch(gitIn(clone, cleanEnv())), 'feature/pay');
    // The clone's origin is a local path: no web address.
    assert.equal(resolveContext({ given: {}, env: cleanEnv(), dir: clone }).repositoryUrl, undefined);
  });

  it('asks for --branch when the folder is no checkout', () => {
    const dir = tmpDir();
    assert.throws(
      () => resolveContext({ given: {}, env: cleanEnv({ GIT_CEILING_DIRECTORIES: path.dirname(dir) }), dir }),
      (e: unknown) =>
        e instanceof CliError &&
        e.exitCode === 2 &&
        /Cannot tell the branch: .* is not a git checkout.*pass --branch or set FLAGPOST_SCAN_BRANCH/.test(e.message),
    );
  });
});
