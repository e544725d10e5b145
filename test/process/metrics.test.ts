import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Metrics } from '../../src/metrics/metrics.ts';
import { MetricsServer } from '../../src/metrics/metrics-server.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { startWebhookReceiver, waitFor } from '../support/forms.ts';
import { freePort, startServerProcess, waitForHealth } from '../support/process.ts';

// Issue 23, metrics: a scrape of /metrics after a known workload shows the expected counter increases,
// on the metrics listener only.

/** The samples of a Prometheus text exposition: `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    map.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return map;
}

const delta = (after: Map<string, number>, before: Map<string, number>, series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);

forEachDialect(
  'metrics',
  (ctx) => {
    let server: MetricsServer;
    let scrapeUrl: string;
    let base: string;
    let project: ProjectFixture;
    const scrape = async () => {
      const res = await fetch(scrapeUrl);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      return samples(await res.text());
    };
    before(async () => {
      server = new MetricsServer(ctx().services.metrics!, ctx().services.log);
      scrapeUrl = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}/metrics`;
      project = await createProject(ctx(), 'Metrics');
      await createFlag(ctx(), project.key, { slug: 'shown', enabled: true });
      await ctx().app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(ctx().app.server.address() as { port: number }).port}`;
    });
    after(async () => {
      await server.close();
    });

    it('counts a known workload: requests by route template and status class, flag reads by surface and reason, submissions by cause', async () => {
      const h = keys(project);
      // Warm the snapshot, so that the reads below go through the fast path.
      await fetch(`${base}/v1/flags/shown`, { headers: h });
      const before = await scrape();
      for (let i = 0; i < 7; i++) assert.equal((await fetch(`${base}/v1/flags/shown`, { headers: h })).status, 200);
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${base}/v1/flags/missing-${i}`, { headers: h })).status, 404);
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${base}/ofrep/v1/evaluate/flags`, { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{}' });
        assert.equal(res.status, 200);
      }
      // The list through the fast path and through Fastify: one route template.
      assert.equal((await fetch(`${base}/v1/flags`, { headers: h })).status, 200);
      assert.equal((await ctx().app.inject({ method: 'GET', url: '/v1/flags', headers: h })).statusCode, 200);
      for (let i = 0; i < 4; i++) assert.equal((await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).statusCode, 200);
      assert.equal((await ctx().app.inject({ method: 'GET', url: '/no/such/path' })).statusCode, 404);
      const refused = await ctx().app.inject({
        method: 'POST',
        url: '/v1/s/unknown-form',
        payload: 'a=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(refused.statusCode, 303, 'a refused submission goes to the error page');
      const after = await scrape();

      const http = (method: string, route: string, cls: string) => `flagpost_http_requests_total{method="${method}",route="${route}",status_class="${cls}"}`;
      assert.equal(delta(after, before, http('GET', '/v1/flags/:slug', '2xx')), 7, 'fast-path answers, by route template');
      assert.equal(delta(after, before, http('GET', '/v1/flags/:slug', '4xx')), 3, 'unknown slugs: the template, never the raw path');
      assert.equal(delta(after, before, http('POST', '/ofrep/v1/evaluate/flags', '2xx')), 2);
      assert.equal(delta(after, before, http('GET', '/admin/v1/projects/:projectKey/flags', '2xx')), 4);
      assert.equal(delta(after, before, http('GET', 'unmatched', '4xx')), 1);
      assert.equal(delta(after, before, http('GET', '/v1/flags', '2xx')), 2, [...after.keys()].filter((k) => k.includes('/v1/flags')).join('\n'));
      assert.equal(
        delta(after, before, 'flagpost_http_request_duration_seconds_count{method="GET",route="/v1/flags/:slug",status_class="2xx"}'),
        7,
        'each answer has its duration',
      );
      assert.ok(![...after.keys()].some((k) => k.includes('missing-')), 'no raw path in any series');
      assert.equal(delta(after, before, 'flagpost_flag_reads_total{surface="v1_single",reason="STATIC"}'), 7, 'found flags only');
      assert.equal(delta(after, before, 'flagpost_flag_reads_total{surface="ofrep_bulk",reason="STATIC"}'), 2, 'one flag per bulk read');
      assert.equal(delta(after, before, 'flagpost_flag_reads_total{surface="v1_list",reason="STATIC"}'), 2);
      assert.equal(delta(after, before, 'flagpost_submissions_total{outcome="refused",cause="unknown_form"}'), 1);
      assert.equal(after.get('flagpost_event_streams_open{kind="ofrep"}'), 0);
      assert.equal(after.get('flagpost_outbox_pending_deliveries'), 0);
      assert.equal(after.get('flagpost_outbox_oldest_pending_age_seconds'), 0);
      assert.ok((after.get('flagpost_read_model_rebuild_duration_seconds_count') ?? 0) >= 1, 'the snapshot was built at least once');
      assert.ok((after.get('process_cpu_seconds_total') ?? 0) > 0, 'process metrics');
      if (ctx().dialect === 'postgres') assert.ok((after.get('flagpost_db_pool_connections{state="max"}') ?? 0) > 0);
    });

    it('counts flag evaluations by surface and reason: one per flag of a bulk or list read, through the fast path and the routes alike', async () => {
      const reasons = await createProject(ctx(), 'Reasons');
      const h = keys(reasons);
      const patch = async (slug: string, body: unknown) => {
        const res = await ctx().admin('PATCH', `/admin/v1/projects/${reasons.key}/environments/${reasons.environments[0]!.key}/flags/${slug}`, body);
        assert.equal(res.statusCode, 200, res.body);
      };
      // Five flags, one per reason a bulk evaluation gives for { country: 'DE', targetingKey: 'u1' }.
      await createFlag(ctx(), reasons.key, { slug: 'static-on', enabled: true });
      await createFlag(ctx(), reasons.key, { slug: 'targeted', enabled: false });
      await patch('targeted', { rules: [{ id: 'de', conditions: [{ attribute: 'country', operator: 'in', values: ['DE'] }], serve: { variant: 'on' } }] });
      await createFlag(ctx(), reasons.key, { slug: 'elsewhere', enabled: false });
      await patch('elsewhere', { rules: [{ id: 'fr', conditions: [{ attribute: 'country', operator: 'in', values: ['FR'] }], serve: { variant: 'on' } }] });
      // A new string flag is DISABLED until switched on.
      await createFlag(ctx(), reasons.key, { slug: 'typed-off', type: 'string', variants: { a: 'a', b: 'b' }, defaultVariant: 'a' });
      await createFlag(ctx(), reasons.key, { slug: 'split', type: 'string', variants: { a: 'a', b: 'b' }, defaultVariant: 'a' });
      await patch('split', {
        state: 'ENABLED',
        rules: [
          {
            id: 'ab',
            conditions: [],
            serve: {
              split: {
                weights: [
                  { variant: 'a', weight: 50 },
                  { variant: 'b', weight: 50 },
                ],
              },
            },
          },
        ],
      });

      type Send = (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<{ status: number; json: () => unknown }>;
      // Through the fast path (a real connection to a warm snapshot) and through Fastify's routes (inject never reaches the fast path).
      const viaFastPath: Send = async (method, url, body) => {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: { ...h, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, json: () => JSON.parse(text) };
      };
      const viaRoutes: Send = async (method, url, body) => {
        const res = await ctx().app.inject({
          method,
          url,
          headers: { ...h, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          payload: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.statusCode, json: () => res.json() };
      };
      const workload = async (send: Send) => {
        const reasonOf = async (key: string, context: unknown) => {
          const res = await send('POST', `/ofrep/v1/evaluate/flags/${key}`, { context });
          return [res.status, (res.json() as { reason?: string; errorCode?: string }).reason ?? (res.json() as { errorCode: string }).errorCode];
        };
        for (let i = 0; i < 3; i++) assert.deepEqual(await reasonOf('targeted', { country: 'DE' }), [200, 'TARGETING_MATCH']);
        for (let i = 0; i < 2; i++) assert.deepEqual(await reasonOf('static-on', {}), [200, 'STATIC']);
        assert.deepEqual(await reasonOf('targeted', { targetingKey: 5 }), [400, 'INVALID_CONTEXT'], 'a failed evaluation: ERROR');
        assert.deepEqual(await reasonOf('missing', {}), [404, 'FLAG_NOT_FOUND'], 'an unknown key: ERROR');
        const bulk = await send('POST', '/ofrep/v1/evaluate/flags', { context: { country: 'DE', targetingKey: 'u1' } });
        assert.equal(bulk.status, 200);
        const answered = (bulk.json() as { flags: Array<{ key: string; reason: string }> }).flags.filter((f) => !f.key.endsWith(':payload'));
        assert.deepEqual(answered.map((f) => f.reason).sort(), ['DEFAULT', 'DISABLED', 'SPLIT', 'STATIC', 'TARGETING_MATCH']);
        assert.equal((await send('GET', '/v1/flags/static-on')).status, 200);
        assert.equal((await send('GET', '/v1/flags/typed-off')).status, 200);
        assert.equal((await send('GET', '/v1/flags/missing')).status, 404, 'no flag: no /v1 evaluation');
        assert.equal((await send('GET', '/v1/flags')).status, 200);
      };
      // Warm the snapshot, so that the fast path answers what it can.
      assert.equal((await viaFastPath('GET', '/v1/flags')).status, 200);
      const before = await scrape();
      await workload(viaFastPath);
      await workload(viaRoutes);
      const after = await scrape();

      // Per run of the workload; every other series of the metric stays where it was.
      const expected: Record<string, number> = {
        'surface="ofrep_single",reason="TARGETING_MATCH"': 3,
        'surface="ofrep_single",reason="STATIC"': 2,
        'surface="ofrep_single",reason="ERROR"': 2,
        'surface="ofrep_bulk",reason="STATIC"': 1,
        'surface="ofrep_bulk",reason="TARGETING_MATCH"': 1,
        'surface="ofrep_bulk",reason="DEFAULT"': 1,
        'surface="ofrep_bulk",reason="SPLIT"': 1,
        'surface="ofrep_bulk",reason="DISABLED"': 1,
        'surface="v1_single",reason="STATIC"': 1,
        'surface="v1_single",reason="DISABLED"': 1,
        // /v1 never evaluates: the default serve (STATIC), DISABLED for the string flag switched off.
        'surface="v1_list",reason="STATIC"': 4,
        'surface="v1_list",reason="DISABLED"': 1,
      };
      const series = [...after.keys()].filter((k) => k.startsWith('flagpost_flag_reads_total{'));
      assert.ok(series.length >= 17, `every reason a surface answers is published, zero included:\n${series.join('\n')}`);
      const increases = Object.fromEntries(
        series.map((k) => [k.slice('flagpost_flag_reads_total{'.length, -1), delta(after, before, k)]).filter(([, n]) => n !== 0),
      );
      assert.deepEqual(increases, Object.fromEntries(Object.entries(expected).map(([k, n]) => [k, 2 * n])));
    });

    it('answers 404 on the metrics listener for anything but GET /metrics', async () => {
      assert.equal((await fetch(scrapeUrl.replace('/metrics', '/'))).status, 404);
      assert.equal((await fetch(scrapeUrl, { method: 'POST' })).status, 404);
    });

    // Last: its failed delivery stays pending (retried an hour later).
    it("counts project webhooks' deliveries in the outbox metrics (every delivery queue is)", async () => {
      const up = await startWebhookReceiver();
      const down = await startWebhookReceiver([500]);
      try {
        for (const url of [up.url, down.url]) {
          assert.equal((await ctx().admin('POST', `/admin/v1/projects/${project.key}/webhooks`, { url, events: ['flag.updated'] })).statusCode, 201);
        }
        const before = await scrape();
        const env = project.environments[0]!.key;
        const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/shown`, { description: 'told' });
        assert.equal(res.statusCode, 200, res.body);
        // The commit woke the worker; a run queued after its run ends once both outcomes are recorded.
        await waitFor(() => up.received.length === 1 && down.received.length === 1, 10_000, 'both webhooks called');
        await ctx().services.webhookWorker.runOnce();
        const after = await scrape();
        assert.equal(delta(after, before, 'flagpost_outbox_deliveries_total{outcome="delivered"}'), 1);
        assert.equal(delta(after, before, 'flagpost_outbox_deliveries_total{outcome="retry"}'), 1);
        assert.equal(after.get('flagpost_outbox_pending_deliveries'), 1, 'the failed delivery waits for its retry');
        assert.ok((after.get('flagpost_outbox_oldest_pending_age_seconds') ?? -1) >= 0);
      } finally {
        await up.close();
        await down.close();
      }
    });
  },
  { FLAGPOST_METRICS_PORT: '9', FLAGPOST_RATE_LIMIT_MAX: '0', FLAGPOST_WEBHOOK_TARGETS: 'private', FLAGPOST_OUTBOX_RETRY_BASE_MS: '3600000' },
);

describe('the metrics listener of the server process', () => {
  it('serves /metrics on FLAGPOST_METRICS_PORT only, never on the public port', async (t) => {
    const port = freePort();
    const metricsPort = port + 1;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-metrics-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const server = startServerProcess(t, {
      PORT: String(port),
      FLAGPOST_METRICS_PORT: String(metricsPort),
      FLAGPOST_DATA_DIR: dataDir,
      FLAGPOST_ADMIN_TOKEN: 'a-long-enough-admin-token',
    });
    try {
      await waitForHealth(port, 60_000);
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /^# HELP flagpost_http_requests_total/m);
      const publicAnswer = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(publicAnswer.status, 404);
    } finally {
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.output());
    }
  });
});

it('still answers a scrape while the database is away, with NaN for the outbox gauges', async () => {
  const metrics = new Metrics({
    reads: { usage: { evaluationCounts: () => [{ surface: 'v1_single', reason: 'STATIC', count: 3 }] } },
    streams: { size: 1 },
    flagdSync: { streamCount: 0 },
    outbox: { outcomes: { delivered: 2 }, queueStats: () => Promise.reject(new Error('connection refused')) },
    database: {},
  });
  const text = await metrics.text();
  const scraped = samples(text);
  assert.ok(Number.isNaN(scraped.get('flagpost_outbox_pending_deliveries')));
  assert.ok(Number.isNaN(scraped.get('flagpost_outbox_oldest_pending_age_seconds')));
  assert.equal(scraped.get('flagpost_flag_reads_total{surface="v1_single",reason="STATIC"}'), 3);
  assert.equal(scraped.get('flagpost_outbox_deliveries_total{outcome="delivered"}'), 2);
});
