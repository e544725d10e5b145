import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { build } from 'esbuild';

// Builds the dashboard (issue 9, docs/adr/0013-dashboard.md) into `<outDir>`: index.html and assets/
// with content-hashed names, the TipTap editor in a chunk of its own, and a .br and a .gz beside every
// asset for @fastify/static's pre-compressed serving. No inline script or style: the dashboard is
// served with a strict Content-Security-Policy.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const gz = promisify(gzip);
const br = promisify(brotliCompress);

export async function buildDashboard(outDir: string): Promise<void> {
  const assets = path.join(outDir, 'assets');
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: { main: path.join(HERE, 'src/main.tsx') },
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: ['chrome120', 'firefox120', 'safari17'],
    define: { 'process.env.NODE_ENV': '"production"' },
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    outdir: assets,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = outputs.find(([, o]) => o.entryPoint?.endsWith('src/main.tsx') && !o.cssBundle?.endsWith('.map'))!;
  const script = path.basename(entry[0]);
  const css = entry[1].cssBundle ? path.basename(entry[1].cssBundle) : undefined;
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Flagpost</title>',
    '<link rel="icon" href="data:,">',
    css ? `<link rel="stylesheet" href="/assets/${css}">` : '',
    `<script type="module" src="/assets/${script}"></script>`,
    '</head>',
    '<body>',
    '<div id="root"></div>',
    '<noscript>The Flagpost dashboard needs JavaScript.</noscript>',
    '</body>',
    '</html>',
    '',
  ]
    .filter(Boolean)
    .join('\n');
  fs.writeFileSync(path.join(outDir, 'index.html'), html);
  for (const file of fs.readdirSync(assets)) {
    const bytes = fs.readFileSync(path.join(assets, file));
    fs.writeFileSync(path.join(assets, `${file}.gz`), await gz(bytes, { level: 9 }));
    fs.writeFileSync(path.join(assets, `${file}.br`), await br(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildDashboard(path.resolve(process.argv[2] ?? path.join(HERE, '..', 'dist', 'web')));
}
