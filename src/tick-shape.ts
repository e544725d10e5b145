import { executionAsyncResource } from 'node:async_hooks';

// Keeps one of Node's own `process.nextTick` records alive for the life of the process (issue 30: the
// /v1 reads 20-40 % slower after the experiments merge; ADR 0042 has the measurements).
//
// Node builds each nextTick record as an object literal with symbol keys (`{ [async_id_symbol]: …,
// [trigger_async_id_symbol]: …, callback, args }`, Node 24 adds a third for the async context frame;
// lib/internal/process/task_queues.js). V8 holds the hidden classes such a literal passes through only
// weakly, in its inline caches too: a full garbage collection at a moment when no record is alive frees
// them, the cache of that literal then meets classes it does not know and turns megamorphic for good,
// and from then on every record is built by V8's runtime (`Runtime_DefineKeyedOwnPropertyInLiteral` in
// `perf`). A flag read makes about nine records (node:http's stream and socket plumbing): under load,
// `nextTick` then took 13 % of the server's CPU samples instead of 1 % (Node 20). Nothing in the read
// path changed; whether such a collection falls at an idle moment before the first request depends on
// the heap, and the experiments merge's larger bundle made it happen. Forcing one full collection at an
// idle moment in the build before that merge reproduced the cost; holding one record, as below, removed
// it in both. One record held for ever keeps its hidden class and, through their back pointers, those
// before it alive, so the cache stays as it was. Inside a nextTick callback the current async resource
// is that record (`executionAsyncResource()`, a public API); anything else is not kept.

let kept: object | undefined;

/** Holds on to the record of one nextTick callback, once; call as early as possible (src/boot.ts). */
export function keepTickShape(): void {
  if (kept !== undefined) return;
  process.nextTick(function keep() {
    const resource = executionAsyncResource() as { callback?: unknown };
    if (resource.callback === keep) kept = resource;
  });
}

/** The record kept, when the running Node.js handed it over (tests). */
export const keptTickRecord = (): object | undefined => kept;
