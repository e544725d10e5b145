import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../cli/src/config.ts';
import { Matcher } from '../cli/src/matcher.ts';
import { scan } from '../cli/src/scan.ts';

// npm run bench:scan: how long `flagpost code-refs` takes to walk and search a tree of 10,000 files
// (mixed languages and sizes, some referencing slugs) for the 200 slugs of an environment, next to a
// baseline measured in the same run: walking the same tree and reading every file, nothing else. No
// network. The target is under 5 s for the scan.

const FILES = Number(process.env.BENCH_FILES ?? 10_000);
const SLUGS = Number(process.env.BENCH_SLUGS ?? 200);
const ROUNDS = 3;
const TARGET_MS = 5000;

/** A small deterministic generator, so that every run scans the same tree. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const slugs = Array.from({ length: SLUGS }, (_, i) => ['feature', 'checkout.v', 'beta_banner', 'exp-ui'][i % 4] + `-${i}`);

const LANGUAGES: Array<{ ext: string; line: (slug: string) => string; filler: string }> = [
  { ext: 'ts', line: (s) => `  if (flags.isOn('${s}')) render();`, filler: '  const value = compute(input, options); // keep going' },
  {
    ext: 'tsx',
    line: (s) => `      <Feature slug="${s}"><Banner /></Feature>`,
    filler: '      <div className="row">{items.map((i) => <Item key={i.id} {...i} />)}</div>',
  },
  { ext: 'py', line: (s) => `    if client.enabled("${s}"):`, filler: '    result = [transform(x) for x in values if x is not None]' },
  { ext: 'go', line: (s) => `\tif client.Enabled(\`${s}\`) {`, filler: '\tresult, err := service.Handle(ctx, request) // handle it' },
  { ext: 'rb', line: (s) => `    return unless Flags.on?("${s}")`, filler: '    items.each { |item| total += item.price * item.quantity }' },
  { ext: 'js', line: (s) => `  const on = useFlag("${s}");`, filler: '  const total = list.reduce((sum, item) => sum + item.size, 0);' },
  { ext: 'json', line: (s) => `  "${s}": true,`, filler: '  "name": "value", "other": [1, 2, 3],' },
  { ext: 'md', line: (s) => `The \`${s}\` flag switches the new screen.`, filler: 'Some prose about the product, its screens and the way they work together.' },
];

function generate(root: string): { bytes: number } {
  const next = random(42);
  let bytes = 0;
  fs.writeFileSync(path.join(root, '.gitignore'), 'build/\n*.log\n');
  for (let i = 0; i < FILES; i++) {
    const lang = LANGUAGES[i % LANGUAGES.length]!;
    const dir = path.join(root, `pkg${i % 20}`, `mod${Math.floor(i / 20) % 25}`, i % 7 === 0 ? 'deep/er' : '');
    fs.mkdirSync(dir, { recursive: true });
    // Sizes: mostly 1-8 KB, one file in 20 of 20-60 KB, one in 500 of ~300 KB.
    const r = next();
    const lines = i % 500 === 0 ? 5000 : i % 20 === 0 ? 400 + Math.floor(r * 600) : 15 + Math.floor(r * 110);
    const out: string[] = [];
    const references = next() < 0.3 ? 1 + Math.floor(next() * 5) : 0;
    const at = new Set(Array.from({ length: references }, () => Math.floor(next() * lines)));
    for (let l = 0; l < lines; l++) out.push(at.has(l) ? lang.line(slugs[Math.floor(next() * slugs.length)]!) : lang.filler);
    const text = `${out.join('\n')}\n`;
    bytes += text.length;
    fs.writeFileSync(path.join(dir, `file${i}.${lang.ext}`), text);
  }
  return { bytes };
}

/** The baseline: the same walk (no ignore rules) and a read of every file, nothing else. */
function readAll(root: string): number {
  let bytes = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if (entry.isFile()) bytes += fs.readFileSync(full).toString('utf8').length;
    }
  }
  return bytes;
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const started = performance.now();
  const value = fn();
  return { ms: performance.now() - started, value };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-bench-scan-'));
  try {
    const generated = time(() => generate(root));
    console.log(`Generated ${FILES} files (${(generated.value.bytes / 1024 / 1024).toFixed(1)} MiB) with ${SLUGS} slugs in ${generated.ms.toFixed(0)} ms`);
    const plain = new Matcher(slugs, { casings: [], patterns: [] });
    const aliased = new Matcher(slugs, { casings: ['camelCase', 'UPPER_SNAKE', 'snake_case'], patterns: ['Flags\\.on\\?\\((\\w+)\\)'] });
    const limits = { ...DEFAULT_LIMITS, maxReferences: 100_000 };
    readAll(root); // Warm the page cache, so that every measurement reads from memory.
    const rows: Array<[string, number[], string]> = [
      ['baseline: walk + read every file', [], ''],
      ['scan: walk + ignore rules + match', [], ''],
      ['scan with 3 casings and a pattern', [], ''],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      const base = time(() => readAll(root));
      rows[0]![1].push(base.ms);
      const one = time(() => scan(plain, { dir: root, ignore: [], limits }));
      rows[1]![1].push(one.ms);
      rows[1]![2] = `${one.value.stats.scanned} files, ${one.value.stats.references} references of ${one.value.references.size} flags`;
      const two = time(() => scan(aliased, { dir: root, ignore: [], limits }));
      rows[2]![1].push(two.ms);
      rows[2]![2] = `${two.value.stats.references} references`;
    }
    const baseline = median(rows[0]![1]);
    console.log(`\nMedian of ${ROUNDS} rounds (Node ${process.version}, ${os.cpus().length} CPUs):`);
    for (const [name, values, note] of rows) {
      const ms = median(values);
      console.log(`  ${name.padEnd(36)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / baseline).toFixed(2).padStart(5)}x baseline  ${note}`);
    }
    const worst = Math.max(median(rows[1]![1]), median(rows[2]![1]));
    console.log(`\nTarget: scan under ${TARGET_MS} ms: ${worst < TARGET_MS ? 'met' : 'MISSED'} (${worst.toFixed(0)} ms)`);
    if (worst >= TARGET_MS) process.exitCode = 1;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main();
