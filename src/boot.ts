import module from 'node:module';
import v8 from 'node:v8';
import { keepTickShape } from './tick-shape.ts';

// The entry of the bundle (`dist/main.js`, what `npm start`, the container and the systemd unit run).
//
// First, V8's young generation. Node 22 and later size it from the heap limit four times larger than
// Node 20 did: a semi-space of 1/32 of the heap limit, up to 64 MB, where Node 20 took 1/128 and at most
// 16 MB. The new space (two semi-spaces) is resident once grown, so under load a Flagpost process held
// about 100 MB more on a machine of 16 GB or more (docs/performance.md: 10,000 event streams). V8 reads
// the size only when the process starts (`v8.setFlagsFromString` later changes nothing), so when no
// `--max-semi-space-size` was given (on the command line or in NODE_OPTIONS), this process replaces itself
// at once with the same command plus Node 20's size: `process.execve` keeps the process id, the
// environment and the standard streams, so npm start, the container (PID 1) and the systemd unit see one
// process, and cluster workers inherit the flag from the primary's arguments. Without `process.execve`
// (Node before 22.15, Windows), or when it fails, the process runs with V8's own sizing.
//
// Then it turns on Node's compile cache (Node 22.1 and later): V8 keeps the compiled code of every module
// loaded after this line on disk (in the system's temporary folder), so that later starts skip parsing
// and compiling most of Fastify, Kysely and the bundle itself. A cache that cannot be written costs
// nothing but the gain. Then it keeps one nextTick record alive (src/tick-shape.ts), and the server
// proper (main.ts) is loaded.
const SEMI_SPACE_FLAG = /^--max[-_]semi[-_]space[-_]size\b/;
const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => SEMI_SPACE_FLAG.test(arg));
const execve = (process as { execve?: (file: string, args: string[]) => never }).execve;
if (!given && typeof execve === 'function') {
  const heapLimitMb = v8.getHeapStatistics().heap_size_limit / 1024 / 1024;
  const semiSpaceMb = Math.max(1, Math.min(16, Math.floor(heapLimitMb / 128)));
  try {
    execve(process.execPath, [process.execPath, `--max-semi-space-size=${semiSpaceMb}`, ...process.execArgv, ...process.argv.slice(1)]);
  } catch {
    // It returns only when the replacement failed: go on as started.
  }
}
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// Before anything loads that could cost a full garbage collection: src/tick-shape.ts says why.
keepTickShape();
await import('./main.ts');
