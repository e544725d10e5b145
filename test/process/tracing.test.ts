import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Issue 23, traces: with an OTLP endpoint set, requests are exported as spans to a real OTLP/HTTP
// receiver on loopback, and flag evaluations are `feature_flag.evaluation` events on them.

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string };
}
interface OtlpSpan {
  name: string;
  attributes?: OtlpAttribute[];
  events?: Array<{ name: string; attributes?: OtlpAttribute[] }>;
}

const received: OtlpSpan[] = [];
const receiver = http.createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (text += c));
  req.on('end', () => {
    if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
      const body = JSON.parse(text) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const r of body.resourceSpans) for (const s of r.scopeSpans) received.push(...s.spans);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
after(() => receiver.close());

const attributesOf = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, a.value.stringValue ?? a.value.boolValue ?? a.value.intValue]));

forEachDialect(
  'traces over OTLP',
  (ctx) => {
    let project: ProjectFixture;
    before(async () => {
      project = await createProject(ctx(), 'Traced');
      await createFlag(ctx(), project.key, { slug: 'traced-flag', enabled: true });
      await createFlag(ctx(), project.key, { slug: 'other-flag', type: 'string', variants: { a: 'x', b: 'y' }, defaultVariant: 'b', enabled: true });
    });

    it('exports request spans with feature_flag.evaluation events carrying the semantic-convention attributes', async () => {
      received.length = 0;
      const h = { ...keys(project), 'content-type': 'application/json' };
      const single = await ctx().app.inject({
        method: 'POST',
        url: '/ofrep/v1/evaluate/flags/other-flag',
        headers: h,
        payload: JSON.stringify({ context: { targetingKey: 'user-7' } }),
      });
      assert.equal(single.statusCode, 200, single.body);
      const bulk = await ctx().app.inject({ method: 'POST', url: '/ofrep/v1/evaluate/flags', headers: h, payload: '{}' });
      assert.equal(bulk.statusCode, 200);
      assert.equal((await ctx().app.inject({ method: 'GET', url: '/v1/flags/traced-flag', headers: keys(project) })).statusCode, 200);
      await ctx().services.tracing!.shutdown();
      for (let i = 0; i < 50 && received.length < 3; i++) await sleep(100);

      // The request's span (its hooks and handler have spans of their own, without events).
      const spanOf = (route: string) => received.find((s) => attributesOf(s.attributes)['http.route'] === route && (s.events ?? []).length > 0);
      const ofrepSingle = spanOf('/ofrep/v1/evaluate/flags/:key');
      assert.ok(ofrepSingle, `spans received: ${received.map((s) => `${s.name} ${JSON.stringify(attributesOf(s.attributes))}`).join('\n')}`);
      const events = (ofrepSingle.events ?? []).filter((e) => e.name === 'feature_flag.evaluation');
      assert.equal(events.length, 1);
      assert.deepEqual(attributesOf(events[0]!.attributes), {
        'feature_flag.key': 'other-flag',
        'feature_flag.provider.name': 'Flagpost',
        'feature_flag.result.reason': 'static',
        'feature_flag.result.variant': 'b',
        'feature_flag.set.id': project.environments[0]!.key,
        'feature_flag.context.id': 'user-7',
      });
      const bulkEvents = (spanOf('/ofrep/v1/evaluate/flags')?.events ?? []).filter((e) => e.name === 'feature_flag.evaluation');
      assert.deepEqual(bulkEvents.map((e) => attributesOf(e.attributes)['feature_flag.key']).sort(), [
        'other-flag',
        'other-flag:payload',
        'traced-flag',
        'traced-flag:payload',
      ]);
      const v1 = (spanOf('/v1/flags/:slug')?.events ?? []).map((e) => attributesOf(e.attributes));
      assert.deepEqual(
        v1.map((a) => [a['feature_flag.key'], a['feature_flag.result.variant']]),
        [['traced-flag', 'on']],
      );
    });
  },
  { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' },
);
