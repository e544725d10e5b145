import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildDashboard } from '../dashboard/build.ts';

// `npm run build` and `npm start` (issue 29 item 16): two starts in one checkout at once (two instances
// of one install, as a systemd template unit runs them) must not race on dist/. The build goes into a
// folder of its own beside dist/ and is renamed into place whole; one build runs at a time (a lock
// folder, also taken by the tests' ensureBuilt); and a build whose sources have not changed since dist/
// was made is skipped (a hash of the sources is kept in dist/.source-hash), so a second start uses the
// first one's bundle instead of replacing it under it.
//
//   node --import tsx scripts/build.ts [--force] [--outdir <dir>]

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What the build reads: a change to any of these makes dist/ stale. */
const BUILD_INPUTS = ['src', 'dashboard', 'package.json', 'package-lock.json'];
const STAMP = '.source-hash';
/** Held while one build runs; a lock older than any build is left over from a killed one. */
const LOCK = path.join(ROOT, 'node_modules', '.flagpost-build-lock');
const STALE_LOCK_MS = 5 * 60_000;

const EXTERNAL = ['better-sqlite3', 'pg', 'ioredis', 'nodemailer', 'happy-dom', '@aws-sdk/*', '@tiptap/*', '@grpc/*', '@opentelemetry/*', '@fastify/otel'];

export function sourceHash(root = ROOT): string {
  const hash = createHash('sha256');
  const visit = (rel: string) => {
    const full = path.join(root, rel);
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full).sort()) if (name !== 'node_modules') visit(path.join(rel, name));
    } else {
      hash.update(rel).update('\0').update(fs.readFileSync(full)).update('\0');
    }
  };
  for (const input of BUILD_INPUTS) visit(input);
  return hash.digest('hex');
}

/** Whether `outDir` holds a whole build of the sources whose hash is `wanted`. */
export function isCurrent(outDir: string, wanted: string): boolean {
  try {
    return (
      fs.existsSync(path.join(outDir, 'main.js')) &&
      fs.existsSync(path.join(outDir, 'web', 'index.html')) &&
      fs.readFileSync(path.join(outDir, STAMP), 'utf8') === wanted
    );
  } catch {
    return false;
  }
}

/** Writes the server bundle and the dashboard into `dir` (empty), and the sources' hash last. */
async function buildInto(dir: string, hash: string): Promise<void> {
  await build({
    entryPoints: { main: path.join(ROOT, 'src/boot.ts'), cli: path.join(ROOT, 'src/cli.ts') },
    bundle: true,
    splitting: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outdir: dir,
    logLevel: 'warning',
    external: EXTERNAL,
    banner: { js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);' },
  });
  fs.copyFileSync(path.join(ROOT, 'src/flagd-sync/flagd-sync.proto'), path.join(dir, 'flagd-sync.proto'));
  await buildDashboard(path.join(dir, 'web'));
  fs.writeFileSync(path.join(dir, STAMP), hash);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function withLock<T>(run: () => Promise<T>): Promise<T> {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      await sleep(100);
    }
  }
  try {
    return await run();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Builds `outDir` (dist/ by default) unless it is current (`force`: always). Answers whether it built.
 * The new build is made in `<outDir>.build-<pid>` and renamed into place: the old folder is moved aside
 * and removed only after the new one is in place, so a reader finds a whole build or, for the instant
 * between the two renames, none: never half of one.
 */
export async function buildDist(options: { outDir?: string; force?: boolean } = {}): Promise<boolean> {
  const outDir = path.resolve(options.outDir ?? path.join(ROOT, 'dist'));
  const wanted = sourceHash();
  if (!options.force && isCurrent(outDir, wanted)) return false;
  return withLock(async () => {
    // Another build may have finished while this one waited for the lock.
    if (!options.force && isCurrent(outDir, wanted)) return false;
    const fresh = `${outDir}.build-${process.pid}`;
    const old = `${outDir}.old-${process.pid}`;
    fs.rmSync(fresh, { recursive: true, force: true });
    try {
      await buildInto(fresh, wanted);
      if (fs.existsSync(outDir)) fs.renameSync(outDir, old);
      fs.renameSync(fresh, outDir);
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
      fs.rmSync(old, { recursive: true, force: true });
    }
    return true;
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  await buildDist({ force: args.includes('--force'), outDir: at >= 0 ? args[at + 1] : undefined });
}
