import assert from 'node:assert/strict';
import cluster from 'node:cluster';
import path from 'node:path';
import { it } from 'node:test';
import { ClusterMetrics } from '../../src/metrics/metrics-server.ts';

// FLAGPOST_WORKERS (docs/adr/0036-metrics-and-traces.md): the primary's scrape sums every worker's
// registry through prom-client's AggregatorRegistry, the flag evaluations by surface and reason that each
// worker publishes in its collect() callback included.

it('sums the counters and gauges of every worker in one exposition', { timeout: 60_000 }, async () => {
  cluster.setupPrimary({ exec: path.join(import.meta.dirname, '../fixtures/metrics-worker.ts'), execArgv: ['--import', 'tsx'] });
  const workers = [3, 4].map((reads) => cluster.fork({ READS: String(reads) }));
  try {
    await Promise.all(workers.map((w) => new Promise<void>((resolve) => w.once('message', () => resolve()))));
    const text = await new ClusterMetrics().text();
    assert.match(text, /^flagpost_flag_reads_total\{surface="ofrep_single",reason="TARGETING_MATCH"\} 7$/m);
    assert.match(text, /^flagpost_flag_reads_total\{surface="ofrep_bulk",reason="STATIC"\} 4$/m);
    assert.match(text, /^flagpost_flag_reads_total\{surface="ofrep_bulk",reason="SPLIT"\} 2$/m);
    assert.match(text, /^flagpost_flag_reads_total\{surface="ofrep_single",reason="STATIC"\} 0$/m, 'the reasons a surface answers, zero included');
    assert.match(text, /^flagpost_event_streams_open\{kind="ofrep"\} 4$/m);
  } finally {
    for (const w of workers) w.kill();
  }
});
