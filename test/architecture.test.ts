import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

// The rules of docs/architecture.md, checked over the import graph of src/ (tests excluded), so that
// they stay true as the house grows. Imports are read with the TypeScript compiler's own scanner;
// type-only imports count like any other.

const SRC = path.resolve(import.meta.dirname, '../src');
const CAPABILITIES = new Set([
  'admin',
  'api-keys',
  'audit',
  'changes',
  'code-refs',
  'dashboard',
  'delivery',
  'documents',
  'evaluation',
  'experiments',
  'feedback',
  'files',
  'flagd-sync',
  'flags',
  'forms',
  'identity',
  'projects',
  'releases',
  'segments',
  'submissions',
  'usage',
  'webhooks',
]);
/** The files of flags/ that the read side (evaluation/) may import: the domain, the loader and the shared schemas. */
const FLAGS_FOR_READS = new Set(['flag.ts', 'flag.store.ts', 'flag.schemas.ts', 'preview-content.ts'].map((f) => path.join('flags', f)));
/** Files at the top of src/ that only compose the others. */
const COMPOSITION = new Set(['main.ts', 'app.ts', 'compose.ts']);

interface Import {
  from: string;
  to: string;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

function importsOf(file: string): Import[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .filter((f) => f.fileName.startsWith('.'))
    .map((f) => ({ from: path.relative(SRC, file), to: path.relative(SRC, path.resolve(path.dirname(file), f.fileName)) }));
}

/** The room a file lives in: its first folder under src/, or the file itself at the top. */
const roomOf = (file: string): string => (file.includes(path.sep) ? file.split(path.sep)[0]! : file);

const imports = sourceFiles(SRC).flatMap(importsOf);
const crossing = imports.filter((i) => roomOf(i.from) !== roomOf(i.to));
const show = (list: Import[]) => list.map((i) => `${i.from} -> ${i.to}`).join('\n');

describe('architecture: which file may import which (docs/architecture.md)', () => {
  it('finds the source files and their imports', () => {
    assert.ok(imports.length > 100, `only ${imports.length} imports found`);
    for (const i of imports) assert.ok(fs.existsSync(path.join(SRC, i.to)), `${i.from} imports a missing file ${i.to}`);
  });

  it('has no import cycle between folders', () => {
    // db/database.ts composes the row types of every *.table.ts; those files import nothing (checked
    // below), so these edges close no real cycle and are left out.
    const edges = new Map<string, Set<string>>();
    for (const i of crossing.filter((c) => !(roomOf(c.from) === 'db' && c.to.endsWith('.table.ts')))) {
      if (!edges.has(roomOf(i.from))) edges.set(roomOf(i.from), new Set());
      edges.get(roomOf(i.from))!.add(roomOf(i.to));
    }
    const state = new Map<string, 'open' | 'done'>();
    const visit = (room: string, trail: string[]): void => {
      if (state.get(room) === 'done') return;
      if (state.get(room) === 'open') assert.fail(`import cycle: ${[...trail.slice(trail.indexOf(room)), room].join(' -> ')}`);
      state.set(room, 'open');
      for (const next of edges.get(room) ?? []) visit(next, [...trail, room]);
      state.set(room, 'done');
    };
    for (const room of edges.keys()) visit(room, []);
  });

  it('keeps http/ free of capabilities and of the composition', () => {
    const bad = crossing.filter((i) => roomOf(i.from) === 'http' && (CAPABILITIES.has(roomOf(i.to)) || COMPOSITION.has(i.to)));
    assert.equal(show(bad), '');
  });

  it('keeps cluster/ free of capabilities, and unknown to them (they own the ports it satisfies)', () => {
    const out = crossing.filter((i) => roomOf(i.from) === 'cluster' && (CAPABILITIES.has(roomOf(i.to)) || COMPOSITION.has(i.to)));
    assert.equal(show(out), '');
    const into = crossing.filter((i) => roomOf(i.to) === 'cluster' && (CAPABILITIES.has(roomOf(i.from)) || roomOf(i.from) === 'http'));
    assert.equal(show(into), '');
  });

  it('lets db/ import only the *.table.ts row types of capabilities', () => {
    const bad = crossing.filter((i) => roomOf(i.from) === 'db' && CAPABILITIES.has(roomOf(i.to)) && !i.to.endsWith('.table.ts'));
    assert.equal(show(bad), '');
    const other = crossing.filter((i) => roomOf(i.from) === 'db' && (['http', 'events'].includes(roomOf(i.to)) || COMPOSITION.has(i.to)));
    assert.equal(show(other), '');
  });

  it('keeps *.table.ts files free of imports', () => {
    assert.equal(show(imports.filter((i) => i.from.endsWith('.table.ts'))), '');
  });

  it('lets events/ import nothing but db/ types', () => {
    const bad = crossing.filter((i) => roomOf(i.from) === 'events' && roomOf(i.to) !== 'db');
    assert.equal(show(bad), '');
  });

  it('reaches a capability from outside only through its index.ts', () => {
    const bad = crossing.filter(
      (i) =>
        CAPABILITIES.has(roomOf(i.to)) &&
        path.basename(i.to) !== 'index.ts' &&
        !(roomOf(i.from) === 'db' && i.to.endsWith('.table.ts')) &&
        !(roomOf(i.from) === 'evaluation' && FLAGS_FOR_READS.has(i.to)),
    );
    assert.equal(show(bad), '');
  });

  it('keeps the write model of flags free of its read side and of its documents', () => {
    const bad = crossing.filter((i) => roomOf(i.from) === 'flags' && ['evaluation', 'documents'].includes(roomOf(i.to)));
    assert.equal(show(bad), '');
  });

  it('keeps usage persistence out of the read side and of the write model: neither evaluation/ nor flags/ imports usage/', () => {
    // The read path only counts in memory (evaluation/flag-usage-tally.ts); usage/ writes the counts and
    // answers flags/' LastEvaluated port.
    const bad = crossing.filter((i) => ['evaluation', 'flags'].includes(roomOf(i.from)) && roomOf(i.to) === 'usage');
    assert.equal(show(bad), '');
  });

  it('lets evaluation/ reach flags/ only through its domain file, loader and shared schemas (not its index: the write service)', () => {
    const bad = crossing.filter((i) => roomOf(i.from) === 'evaluation' && roomOf(i.to) === 'flags' && !FLAGS_FOR_READS.has(i.to));
    assert.equal(show(bad), '');
  });

  it('keeps delivery/ a platform room: it imports only db/ (and the loader of optional packages, the clock port), and no capability', () => {
    const bad = crossing.filter((i) => roomOf(i.from) === 'delivery' && roomOf(i.to) !== 'db' && !['optional-packages.ts', 'clock.ts'].includes(i.to));
    assert.equal(show(bad), '');
  });

  it('keeps identity below the capabilities that ask it: it imports none but the settings store', () => {
    // Every admin write records its actor through the audit log, and the audit log depends on identity
    // for the Actor: identity reaches the audit log through its own port (identity/audit-trail.ts).
    const bad = crossing.filter((i) => roomOf(i.from) === 'identity' && CAPABILITIES.has(roomOf(i.to)) && roomOf(i.to) !== 'admin');
    assert.equal(show(bad), '');
  });

  it('keeps credentials and roles in identity: no other folder hashes a password or defines a role', () => {
    const bad = sourceFiles(SRC)
      .map((file) => path.relative(SRC, file))
      .filter((file) => roomOf(file) !== 'identity')
      .filter((file) => /import[^;]*\bscrypt\b[^;]*from 'node:crypto'|export type Role\b/.test(fs.readFileSync(path.join(SRC, file), 'utf8')));
    assert.deepEqual(bad, []);
  });

  it('keeps experiments/statistics/ pure: it imports its own files and its numeric packages, nothing else', () => {
    // ADR 0043: the statistics are table-tested against gbstats' published cases; no I/O, no clock,
    // no other room, and the distributions come from stdlib's packages only.
    const folder = path.join(SRC, 'experiments', 'statistics');
    const files = sourceFiles(folder);
    assert.ok(files.length > 0, 'no source files in experiments/statistics/');
    const bad = files.flatMap((file) =>
      ts
        .preProcessFile(fs.readFileSync(file, 'utf8'), true, true)
        .importedFiles.map((f) => f.fileName)
        .filter((name) => (name.startsWith('.') ? path.dirname(path.resolve(path.dirname(file), name)) !== folder : !name.startsWith('@stdlib/')))
        .map((name) => `${path.relative(SRC, file)} -> ${name}`),
    );
    assert.equal(bad.join('\n'), '');
  });

  it('never imports the composition (main, app, compose and its compose/ parts) from a folder', () => {
    const bad = crossing.filter((i) => i.from.includes(path.sep) && roomOf(i.from) !== 'compose' && (COMPOSITION.has(i.to) || roomOf(i.to) === 'compose'));
    assert.equal(show(bad), '');
  });
});
