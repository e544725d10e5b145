import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

// Issue 30: the docs are guarded like the errors. Every `src/....ts` path named in docs/, the README and
// the comments of src/ names a file that exists (in the server, or in the dashboard's or the scanner's
// own src/), so that a moved file cannot leave its readers a dead pointer.

const ROOT = path.resolve(import.meta.dirname, '../..');
const PATH = /\bsrc\/[A-Za-z0-9_./-]+\.ts\b/g;
/** Paths of a user's code in the examples of docs/api.md (a code reference upload), not of this repository. */
const EXAMPLES = new Set(['src/Checkout.ts', 'src/Banner.ts']);

function filesUnder(dir: string, ext: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(full, ext);
    return e.name.endsWith(ext) ? [full] : [];
  });
}

/** The comments of a TypeScript file (line and block), where paths name files to read. */
function commentsOf(text: string): string {
  return [...text.matchAll(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g)].map((m) => m[0]).join('\n');
}

const exists = (p: string) => ['', 'dashboard', 'cli'].some((base) => fs.existsSync(path.join(ROOT, base, p)));

function deadPaths(files: string[], textOf: (text: string) => string): string[] {
  return files.flatMap((file) =>
    [...new Set(textOf(fs.readFileSync(file, 'utf8')).match(PATH) ?? [])]
      .filter((p) => !EXAMPLES.has(p) && !exists(p))
      .map((p) => `${path.relative(ROOT, file)}: ${p}`),
  );
}

describe('every src/...ts path named in the docs and in comments exists (issue 30)', () => {
  it('in docs/ and the README', () => {
    const docs = [...filesUnder(path.join(ROOT, 'docs'), '.md'), path.join(ROOT, 'README.md')];
    assert.ok(docs.length > 40);
    assert.deepEqual(
      deadPaths(docs, (t) => t),
      [],
    );
  });

  it('in the comments of src/', () => {
    const sources = filesUnder(path.join(ROOT, 'src'), '.ts');
    assert.ok(sources.length > 200);
    assert.deepEqual(deadPaths(sources, commentsOf), []);
  });

  it('finds a dead path when there is one', () => {
    assert.deepEqual(
      deadPaths([path.join(ROOT, 'docs/architecture.md')], () => 'see src/flags/read/flag.fast-path.ts and src/evaluation/flag.fast-path.ts'),
      ['docs/architecture.md: src/flags/read/flag.fast-path.ts'],
    );
  });
});
