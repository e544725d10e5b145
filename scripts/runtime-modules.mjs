// Copies what the built server needs at run time into <target>: dist/, package.json, and from
// node_modules only the packages the bundle leaves out, with everything they depend on, as npm laid them
// out. The bundle leaves out the EXTERNAL packages of the build script (scripts/build.ts), and what the
// sources load at run time through a `createRequire` function (src/optional-packages.ts, the targeting
// engine's CommonJS helpers): esbuild cannot see those. Used by the Dockerfile, so that
// the image holds no build tool (esbuild, tsx), no dashboard source library and no development package.
//
//   node scripts/runtime-modules.mjs <target>
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const target = process.argv[2];
if (!target) {
  process.stderr.write('usage: node scripts/runtime-modules.mjs <target>\n');
  process.exit(2);
}
const root = process.cwd();
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
// The build script (scripts/build.ts) names them in one array, `const EXTERNAL = [...]`.
const buildScript = fs.readFileSync(path.join(root, 'scripts', 'build.ts'), 'utf8');
const externalList = /const EXTERNAL = \[([^\]]*)\]/.exec(buildScript)?.[1] ?? '';
const externals = [...externalList.matchAll(/'([^']+)'/g)].map((m) => m[1]);
if (externals.length === 0) throw new Error('no EXTERNAL list in scripts/build.ts');
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const loadedAtRunTime = new Set();
const sourcesOf = (dir) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourcesOf(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
for (const file of sourcesOf(path.join(root, 'src'))) {
  const text = fs.readFileSync(file, 'utf8');
  for (const [, loader] of text.matchAll(/\bconst (\w+) = createRequire\(/g)) {
    for (const [, specifier] of text.matchAll(new RegExp(`\\b${loader}\\(\\s*['"]([^'"]+)['"]`, 'g'))) {
      if (!specifier.startsWith('.') && !specifier.startsWith('node:')) loadedAtRunTime.add(packageOf(specifier));
    }
  }
}
externals.push(...[...loadedAtRunTime].filter((name) => !externals.includes(name)));

/** The folder `name` resolves to from the package folder `from`, as Node looks it up. */
function resolvePackage(name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root || dir === path.dirname(dir)) return undefined;
  }
}

const wanted = new Set();
const visit = (dir) => {
  if (wanted.has(dir)) return;
  wanted.add(dir);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const optional = new Set([...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  for (const name of new Set([...Object.keys(pkg.dependencies ?? {}), ...optional])) {
    const found = resolvePackage(name, dir);
    if (found) visit(found);
    else if (!optional.has(name)) throw new Error(`${path.relative(root, dir)} needs ${name}, which is not installed`);
  }
};
for (const external of externals) {
  const names = external.endsWith('/*')
    ? fs.readdirSync(path.join(root, 'node_modules', external.slice(0, -2))).map((n) => `${external.slice(0, -2)}/${n}`)
    : [external];
  for (const name of names) {
    const found = resolvePackage(name, root);
    if (!found) throw new Error(`the external ${name} is not installed (npm ci first)`);
    visit(found);
  }
}

// Compiler output that the addon does not load: object files, dependency lists, SQLite's sources.
const skip = new Set(['better-sqlite3/build/Release/obj.target', 'better-sqlite3/build/Release/.deps', 'better-sqlite3/deps', 'better-sqlite3/src']);
fs.mkdirSync(target, { recursive: true });
for (const dir of [...wanted].sort()) {
  const rel = path.relative(root, dir);
  fs.cpSync(dir, path.join(target, rel), {
    recursive: true,
    filter: (source) => {
      const inner = path.relative(root, source).replace(/^(.*\/)?node_modules\//, '');
      // A nested node_modules is copied by its own entry, only if wanted.
      if (source !== dir && path.basename(source) === 'node_modules') return false;
      return !skip.has(inner);
    },
  });
}
fs.cpSync(path.join(root, 'dist'), path.join(target, 'dist'), { recursive: true });
fs.writeFileSync(
  path.join(target, 'package.json'),
  JSON.stringify({ name: manifest.name, version: manifest.version, private: true, type: manifest.type, engines: manifest.engines }, null, 2) + '\n',
);
// Every package left out of the bundle must resolve from dist/ in the copy.
const fromDist = createRequire(path.join(target, 'dist', 'main.js'));
for (const name of externals) if (!name.endsWith('/*')) fromDist.resolve(`${name}/package.json`);
process.stdout.write(`runtime: ${wanted.size} packages of node_modules (${externals.join(' ')}) and dist/ in ${target}\n`);
