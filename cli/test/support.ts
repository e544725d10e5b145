import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { main } from '../src/main.ts';

// Helpers of the scanner's tests: temporary folders, real git repositories, and the fixture repository
// that the scan and upload tests share (several languages, aliases, ignore rules, skipped files).

export const CLI_DIR = path.resolve(import.meta.dirname, '..');

const created: string[] = [];
// Temporary folders go when the test file's process ends.
process.once('exit', () => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
});

export function tmpDir(prefix = 'flagpost-scan-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function write(root: string, relPath: string, content: string | Buffer): void {
  const file = path.join(root, relPath);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Environment for git and the scanner: no CI variables, no user git configuration. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', ...extra };
}

/** Runs a real git command in `dir` and answers its trimmed output. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=ci@example.com', '-c', 'user.name=CI', '-c', 'commit.gpgsign=false', '-C', dir, ...args], {
    encoding: 'utf8',
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

export function initRepo(dir: string, remote?: string): void {
  git(dir, 'init', '-q', '-b', 'main');
  if (remote) git(dir, 'remote', 'add', 'origin', remote);
}

export function commitAll(dir: string, message = 'commit'): void {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', message);
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The scanner in this process, as `flagpost <argv>` in `cwd` with `env`. */
export async function runCli(argv: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  return { code, stdout, stderr };
}

/** The flags of the fixture environment. */
export const FIXTURE_FLAGS = [
  { slug: 'dark-mode', enabled: true },
  { slug: 'new-checkout', enabled: true },
  { slug: 'header.v2', enabled: false },
  { slug: 'beta_banner', enabled: true },
  { slug: 'old-flag', enabled: true, expiredAt: '2020-01-01T00:00:00.000Z' },
  { slug: 'unused-flag', enabled: true },
];

export const FIXTURE_CONFIG = {
  projectName: 'web-shop',
  aliases: {
    casings: ['camelCase', 'snake_case', 'UPPER_SNAKE'],
    patterns: ['flags\\.isEnabled\\((\\w+)\\)', 'Flags\\.enabled\\?\\(:(\\w+)\\)'],
  },
  ignore: ['*.snap'],
};

export const FIXTURE_REMOTE = 'https://ci-bot:s3cret@git.example.com/acme/web-shop.git';
export const FIXTURE_REPOSITORY_URL = 'https://git.example.com/acme/web-shop';

export const LONG_LINE = `const long = ${'x'.repeat(700)} + "new-checkout" + ${'y'.repeat(700)};`;

/** [slug, filePath, lineNumber] of every reference the fixture holds, sorted. */
export const FIXTURE_EXPECTED: Array<[string, string, number]> = [
  ['beta_banner', 'cmd/server/main.go', 6],
  ['beta_banner', 'keep.log', 1],
  ['beta_banner', 'src/app.ts', 9],
  ['dark-mode', 'cmd/server/main.go', 7],
  ['dark-mode', 'lib/checkout.rb', 3],
  ['dark-mode', 'src/app.ts', 4],
  ['dark-mode', 'src/app.ts', 6],
  ['dark-mode', 'src/app.ts', 7],
  ['header.v2', 'lib/checkout.rb', 5],
  ['header.v2', 'src/Header.tsx', 2],
  ['header.v2', 'src/app.ts', 6],
  ['new-checkout', 'app/main.py', 3],
  ['new-checkout', 'app/main.py', 4],
  ['new-checkout', 'src/app.ts', 5],
  ['new-checkout', 'src/long.ts', 1],
  ['old-flag', 'app/main.py', 7],
];

export const FIXTURE_UNKNOWN = ['ghost-flag', 'mystery_flag', 'phantom'];

/**
 * A git repository on branch main with sources in TypeScript, TSX, Python, Go and Ruby, and files that
 * must not be read: ignored by .gitignore (root and nested, with a negation), by .flagpostignore and by
 * the configuration, in node_modules, binary, minified (by name and by line length) and too large.
 */
export function makeFixtureRepo(): string {
  const dir = tmpDir('flagpost-fixture-');
  const files: Record<string, string | Buffer> = {
    '.flagpostrc.json': JSON.stringify(FIXTURE_CONFIG, null, 2),
    '.gitignore': 'dist/\n*.log\n!keep.log\n/generated.ts\n',
    '.flagpostignore': 'fixtures/\n',
    'src/.gitignore': 'local.ts\n',
    'src/app.ts': [
      "import { useFlag } from '@basestack/flags-react';",
      '',
      'export function App() {',
      '  const dark = useFlag("dark-mode");',
      "  const checkout = flags.get('new-checkout');",
      "  const both = ['dark-mode', `header.v2`, 'dark-mode'];",
      '  return dark ? checkout : "dark-mode";',
      '  const lookalike = "headerXv2" + "dark-modes" + "new-checkout-2" + dark_mode;',
      '  const banner = "beta_banner";   \t',
      '}',
      '',
    ].join('\n'),
    'src/Header.tsx': [
      'export const Header = () => (',
      '  <Feature slug="header.v2">',
      '    <Feature slug="ghost-flag">',
      '      <Banner />',
      '    </Feature>',
      '  </Feature>',
      ');',
      "const other = useFlag('phantom');",
      '',
    ].join('\n'),
    'src/long.ts': `${LONG_LINE}\n`,
    'src/local.ts': 'export const local = "dark-mode";\n',
    'app/main.py': [
      'from flagpost import flags',
      '',
      'if flags.isEnabled(newCheckout):',
      '    print("NEW_CHECKOUT")',
      'if flags.isEnabled(mystery_flag):',
      '    pass',
      "x = 'old-flag'",
      '',
    ].join('\r\n'),
    'cmd/server/main.go': [
      'package main',
      '',
      'import "fmt"',
      '',
      'func main() {',
      '\tif client.Enabled(`beta_banner`) {',
      '\t\tfmt.Println("darkMode")',
      '\t}',
      '}',
      '',
    ].join('\n'),
    'lib/checkout.rb': ['class Checkout', '  def show?', '    Flags.enabled?(:dark_mode)', '  end', "  LABEL = 'header.v2'", 'end', ''].join('\n'),
    'keep.log': 'saw "beta_banner" once\n',
    'debug.log': 'saw "dark-mode" twice\n',
    'generated.ts': 'export const g = "dark-mode";\n',
    'dist/bundle.js': 'var a="dark-mode";\n',
    'fixtures/sample.ts': 'export const s = "dark-mode";\n',
    'test/__snapshots__/app.snap': 'exports[`x`] = "dark-mode";\n',
    'node_modules/lib/index.js': 'module.exports = "dark-mode";\n',
    'assets/logo.bin': Buffer.concat([Buffer.from('PNG\0\0\u0001'), Buffer.from('"dark-mode"')]),
    'public/app.min.js': 'var a="dark-mode";\n',
    'public/vendor.js': `var a=${JSON.stringify('z'.repeat(5000))},b="dark-mode";\n`,
    'data/huge.ts': `export const big = "dark-mode";\n${'// padding padding padding padding\n'.repeat(32_000)}`,
    'README.md': '# Shop\n\nNo flags here.\n',
  };
  for (const [relPath, content] of Object.entries(files)) write(dir, relPath, content);
  initRepo(dir, FIXTURE_REMOTE);
  commitAll(dir, 'fixture');
  return dir;
}
