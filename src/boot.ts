import module from 'node:module';

// The entry of the bundle (`dist/main.js`, what `npm start` runs). Before anything else is loaded, it turns
// on Node's compile cache (Node 22.1 and later): V8 keeps the compiled code of every module loaded after
// this line on disk (in the system's temporary folder), so that later starts skip parsing and compiling
// most of Fastify, Kysely and the bundle itself. A cache that cannot be written costs nothing but the
// gain. Then the server proper (main.ts) is loaded.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./main.ts');
