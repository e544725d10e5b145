import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CliError } from '../src/errors.ts';
import { Matcher } from '../src/matcher.ts';
import { lineExcerpt, scan } from '../src/scan.ts';
import { skipByContent, skipByName, walk, type WalkStats } from '../src/walk.ts';
import { DEFAULT_LIMITS } from '../src/config.ts';
import { FIXTURE_CONFIG, FIXTURE_EXPECTED, FIXTURE_FLAGS, makeFixtureRepo, tmpDir, write } from './support.ts';

const found = (matcher: Matcher, text: string) => matcher.find(text).map((m) => [m.slug, m.known, text.slice(m.index, m.index + m.length)]);
const files = (root: string, extraIgnore: string[] = []) => {
  const stats: WalkStats = { ignored: 0, unreadableDirs: 0 };
  return { list: [...walk(root, { extraIgnore, maxFiles: 1000 }, stats)].map((e) => e.relPath), stats };
};

describe('matching slugs', () => {
  it('finds slugs between double quotes, single quotes and backticks only, with . - _ taken literally', () => {
    const matcher = new Matcher(['dark-mode', 'header.v2', 'beta_banner'], { casings: [], patterns: [] });
    assert.deepEqual(found(matcher, `a("dark-mode") b('header.v2') c(\`beta_banner\`)`), [
      ['dark-mode', true, 'dark-mode'],
      ['header.v2', true, 'header.v2'],
      ['beta_banner', true, 'beta_banner'],
    ]);
    assert.deepEqual(found(matcher, `"headerXv2" "dark-mode-2" "xdark-mode" dark-mode 'dark-mode" "header.v2'`), []);
    assert.deepEqual(found(matcher, `"'dark-mode'"`), [['dark-mode', true, 'dark-mode']]);
  });

  it("matches Basestack's useFlag and <Feature slug>, and reports unknown slugs there", () => {
    const matcher = new Matcher(['dark-mode'], { casings: [], patterns: [] });
    assert.deepEqual(found(matcher, 'const { enabled } = useFlag("dark-mode");'), [['dark-mode', true, 'dark-mode']]);
    assert.deepEqual(found(matcher, '<Feature slug="dark-mode" fallback={null}>'), [['dark-mode', true, 'dark-mode']]);
    assert.deepEqual(found(matcher, "useFlag<Payload>( 'nope' ); <Feature fallback={x} slug={'gone'}>"), [
      ['nope', false, 'nope'],
      ['gone', false, 'gone'],
    ]);
  });

  it('finds casing aliases between quotes, reported under the slug; a name that is a slug stays that slug', () => {
    const matcher = new Matcher(['new-checkout', 'newCheckout2', 'a-b', 'a.b'], { casings: ['camelCase', 'UPPER_SNAKE', 'snake_case'], patterns: [] });
    assert.deepEqual(found(matcher, `"newCheckout" 'NEW_CHECKOUT' "new_checkout" "newCheckout2"`), [
      ['new-checkout', true, 'newCheckout'],
      ['new-checkout', true, 'NEW_CHECKOUT'],
      ['new-checkout', true, 'new_checkout'],
      ['newCheckout2', true, 'newCheckout2'],
    ]);
    // a-b and a.b share every alias: a match counts for both.
    assert.deepEqual(found(matcher, `"a_b"`), [
      ['a-b', true, 'a_b'],
      ['a.b', true, 'a_b'],
    ]);
  });

  it('runs the configured patterns: group 1 is a slug, an alias, or an unknown slug', () => {
    const matcher = new Matcher(['dark-mode', 'beta'], { casings: ['snake_case'], patterns: ['flags\\.isEnabled\\((\\w+)\\)', '^FLAG (\\S+)$'] });
    assert.deepEqual(found(matcher, 'if flags.isEnabled(dark_mode) and flags.isEnabled(other):\nFLAG beta\n'), [
      ['dark-mode', true, 'dark_mode'],
      ['other', false, 'other'],
      ['beta', true, 'beta'],
    ]);
  });

  it('has no quoted expression when the environment has no flags', () => {
    assert.deepEqual(found(new Matcher([], { casings: ['camelCase'], patterns: [] }), '"" \'\' useFlag("x")'), [['x', false, 'x']]);
  });
});

describe('stored lines', () => {
  it('trims trailing whitespace and keeps a short line as it is', () => {
    assert.equal(lineExcerpt('  x("a")  \t\r', 5, 1, 500), '  x("a")');
  });

  it('cuts a long line around the match to exactly the maximum, with ellipses', () => {
    const line = `${'a'.repeat(1000)}"slug"${'b'.repeat(1000)}`;
    const middle = lineExcerpt(line, 1001, 4, 100);
    assert.equal(middle.length, 100);
    assert.ok(middle.startsWith('…') && middle.endsWith('…') && middle.includes('"slug"'));
    const start = lineExcerpt(`"slug"${'b'.repeat(1000)}`, 1, 4, 100);
    assert.equal(start, `"slug"${'b'.repeat(93)}…`);
    const end = lineExcerpt(`${'a'.repeat(1000)}"slug"`, 1001, 4, 100);
    assert.equal(end, `…${'a'.repeat(93)}"slug"`);
  });

  it('never cuts a surrogate pair in half', () => {
    const line = `${'😀'.repeat(300)}"slug"${'😀'.repeat(300)}`;
    for (const max of [20, 21, 100, 101]) {
      const out = lineExcerpt(line, 601, 4, max);
      assert.ok(out.length <= max && out.includes('slug'));
      assert.equal(Buffer.from(out, 'utf8').toString('utf8'), out, 'well-formed');
      assert.doesNotMatch(out, /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    }
  });
});

describe('skip rules', () => {
  it('skips by path length, size and minified names before reading', () => {
    assert.equal(skipByName('src/a.ts', 10, 100), undefined);
    assert.equal(skipByName('src/a.ts', 101, 100), 'tooLarge');
    assert.equal(skipByName('public/app.min.js', 10, 100), 'minified');
    assert.equal(skipByName('public/style.MIN.css', 10, 100), 'minified');
    assert.equal(skipByName('admin.mind/app.ts', 10, 100), undefined);
    assert.equal(skipByName(`${'d/'.repeat(1000)}a.ts`, 10, 100), 'pathTooLong');
  });

  it('skips binary files (NUL in the first 8 KB) and files of very long average lines', () => {
    assert.equal(skipByContent(Buffer.from('a\0b"dark-mode"')), 'binary');
    assert.equal(skipByContent(Buffer.concat([Buffer.alloc(9000, 'a'), Buffer.from('\0')])), 'minified', 'a NUL past 8 KB is text');
    assert.equal(skipByContent(Buffer.from(`${'x'.repeat(5000)}\n`)), 'minified');
    assert.equal(skipByContent(Buffer.from(`${'x'.repeat(3000)}\n`)), undefined, 'a small file with one long line is read');
    assert.equal(skipByContent(Buffer.from(`${'x'.repeat(200)}\n`.repeat(100))), undefined);
  });
});

describe('the tree walk', () => {
  it('follows .gitignore (root, nested, negations), .flagpostignore and extra patterns; never .git nor node_modules', () => {
    const root = tmpDir();
    for (const file of [
      'a.ts',
      'b.log',
      'keep.log',
      'build/out.js',
      'src/x.ts',
      'src/gen/y.ts',
      'src/gen/keep.ts',
      'src/deep/z.ts',
      'vendor/v.ts',
      'docs/d.snap',
      'node_modules/m/i.js',
      'src/node_modules/m/i.js',
      '.git/config',
      'Build/upper.ts',
    ]) {
      write(root, file, 'x');
    }
    write(root, '.gitignore', '# comment\n*.log\n!keep.log\nbuild/\n');
    write(root, 'src/.gitignore', 'gen/*\n!gen/keep.ts\n');
    write(root, 'src/deep/.flagpostignore', 'z.ts\n');
    write(root, '.flagpostignore', '/vendor\n');
    fs.symlinkSync(path.join(root, 'src'), path.join(root, 'link'));
    const { list, stats } = files(root, ['*.snap']);
    assert.deepEqual(list, [
      '.flagpostignore',
      '.gitignore',
      'a.ts',
      'keep.log',
      'Build/upper.ts',
      'src/.gitignore',
      'src/x.ts',
      'src/deep/.flagpostignore',
      'src/gen/keep.ts',
    ]);
    // b.log, build/, docs/d.snap, src/deep/z.ts, src/gen/y.ts, vendor/
    assert.equal(stats.ignored, 6);
  });

  it('stops with exit 4 past --max-files, naming the option', () => {
    const root = tmpDir();
    for (let i = 0; i < 5; i++) write(root, `f${i}.ts`, '');
    const stats: WalkStats = { ignored: 0, unreadableDirs: 0 };
    assert.equal([...walk(root, { extraIgnore: [], maxFiles: 5 }, stats)].length, 5);
    assert.throws(
      () => [...walk(root, { extraIgnore: [], maxFiles: 4 }, stats)],
      (e: unknown) => e instanceof CliError && e.exitCode === 4 && /more than 4 files to scan \(the --max-files cap\).*--max-files/.test(e.message),
    );
  });

  it('finds exactly the references of the fixture repository, in sorted order', () => {
    const dir = makeFixtureRepo();
    const matcher = new Matcher(
      FIXTURE_FLAGS.map((f) => f.slug),
      FIXTURE_CONFIG.aliases as ConstructorParameters<typeof Matcher>[1],
    );
    const result = scan(matcher, { dir, ignore: FIXTURE_CONFIG.ignore, limits: DEFAULT_LIMITS });
    const triples = [...result.references].flatMap(([slug, refs]) => refs.map((r): [string, string, number] => [slug, r.filePath, r.lineNumber]));
    assert.deepEqual(
      triples.sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1)),
      FIXTURE_EXPECTED,
    );
    assert.deepEqual(result.stats.skipped, { envFile: 0, binary: 1, minified: 2, tooLarge: 1, pathTooLong: 0, unreadable: 0 });
    assert.equal(result.stats.scanned, 12);
    assert.deepEqual([...result.unknown.keys()].sort(), ['ghost-flag', 'mystery_flag', 'phantom']);
    assert.deepEqual(result.unknown.get('mystery_flag'), [{ filePath: 'app/main.py', lineNumber: 5, lineContent: 'if flags.isEnabled(mystery_flag):' }]);

    const capped = () => scan(matcher, { dir, ignore: [], limits: { ...DEFAULT_LIMITS, maxReferences: 10 } });
    assert.throws(
      capped,
      (e: unknown) => e instanceof CliError && e.exitCode === 4 && /more than 10 references found \(the --max-references cap\)/.test(e.message),
    );
    const small = scan(matcher, { dir, ignore: [], limits: { ...DEFAULT_LIMITS, maxFileBytes: 150 } });
    assert.ok(small.stats.skipped.tooLarge > 1);
  });
});

describe('secrets stay on the machine (ADR 0023)', () => {
  const matcher = new Matcher(['new-checkout', 'dark-mode'], { casings: ['UPPER_SNAKE'], patterns: [] });
  const lines = (result: ReturnType<typeof scan>) => [...result.references.values()].flat().map((r) => `${r.filePath}:${r.lineNumber}: ${r.lineContent}`);

  it('skips .env files by default and counts them; --scan-env-files reads them', () => {
    const dir = tmpDir();
    write(dir, '.env', 'API_KEY=fpa_live_secret_value_1234\nFLAG="new-checkout"\n');
    write(dir, '.env.production', 'FLAG="new-checkout"\n');
    write(dir, 'config/.envrc', 'export FLAG="new-checkout"\n');
    write(dir, 'src/environment.ts', "export const flag = 'new-checkout';\n");
    const result = scan(matcher, { dir, ignore: [], limits: DEFAULT_LIMITS });
    assert.deepEqual(lines(result), ["src/environment.ts:1: export const flag = 'new-checkout';"]);
    assert.equal(result.stats.skipped.envFile, 3);
    const opted = scan(matcher, { dir, ignore: [], limits: DEFAULT_LIMITS, scanEnvFiles: true });
    assert.equal(opted.stats.skipped.envFile, 0);
    assert.equal(lines(opted).length, 4);
  });

  it('redacts secret-looking values in the uploaded lines and keeps the slug', () => {
    const dir = tmpDir();
    write(
      dir,
      'src/app.ts',
      [
        "const client = new Flagpost({ apiKey: 'fpa_9sK2mQ7xL4vB8nR1tY5w' }); client.isEnabled('new-checkout');",
        "const AWS = 'AKIAIOSFODNN7EXAMPLE'; const NEW_CHECKOUT = flags.get('dark-mode');",
        '-----BEGIN PRIVATE KEY----- "dark-mode"',
        `const long = '${'x'.repeat(600)}'; const token = "ghp_${'a1B2'.repeat(9)}"; use('new-checkout');`,
      ].join('\n'),
    );
    const result = scan(matcher, { dir, ignore: [], limits: DEFAULT_LIMITS });
    const stored = [...new Set(lines(result))].sort();
    for (const secret of ['fpa_9sK2', 'AKIAIOSFODNN7EXAMPLE', 'BEGIN PRIVATE KEY', 'ghp_']) assert.ok(!stored.join('\n').includes(secret), secret);
    assert.deepEqual(stored.slice(0, 3), [
      "src/app.ts:1: const client = new Flagpost({ apiKey: '[redacted]' }); client.isEnabled('new-checkout');",
      "src/app.ts:2: const AWS = '[redacted]'; const NEW_CHECKOUT = flags.get('dark-mode');",
      'src/app.ts:3: [redacted]',
    ]);
    // Redacted before the line is cut to 500 characters around the match: the token went whole.
    assert.match(stored[3]!, /^src\/app\.ts:4: …x+'; const token = "\[redacted\]"; use\('new-checkout'\);$/);
  });
});
