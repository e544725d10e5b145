import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { OpenFeature as ServerOpenFeature } from '@openfeature/server-sdk';
import { OpenFeature as WebOpenFeature } from '@openfeature/web-sdk';
import { FlagpostProvider, FlagpostWebProvider } from '@flagpost/openfeature';

// The package as its users run it (the built workspace package, the published SDKs), against a loopback
// server that answers OFREP like Flagpost and records what arrives at /v1/track. The real app is the
// subject of test/experiments/experiments-openfeature.test.ts; this file pins the provider's own behaviour: headers,
// which evaluations are exposures, deduplication, batching, flushing on close, retry after an outage.

interface Received {
  headers: http.IncomingHttpHeaders;
  events: Array<Record<string, unknown>>;
}

/** Variant served per targeting key: users whose key ends in an even digit get `treatment`. */
function splitAnswer(key: string, targetingKey: unknown) {
  if (key === 'fixed') return { key, value: true, variant: 'on', reason: 'TARGETING_MATCH', metadata: {} };
  const treatment = typeof targetingKey === 'string' && /[02468]$/.test(targetingKey);
  return { key, value: treatment, variant: treatment ? 'treatment' : 'control', reason: 'SPLIT', metadata: {} };
}

let server: http.Server;
let baseUrl: string;
const tracked: Received[] = [];
let trackStatus = 202;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const json = body ? (JSON.parse(body) as { context?: { targetingKey?: unknown }; events?: Array<Record<string, unknown>> }) : {};
      res.setHeader('content-type', 'application/json');
      const single = /^\/ofrep\/v1\/evaluate\/flags\/([^/]+)$/.exec(req.url ?? '');
      if (single) return res.end(JSON.stringify(splitAnswer(decodeURIComponent(single[1]!), json.context?.targetingKey)));
      if (req.url === '/ofrep/v1/evaluate/flags') {
        const flags = ['checkout', 'fixed'].map((key) => splitAnswer(key, json.context?.targetingKey));
        return res.end(JSON.stringify({ flags }));
      }
      if (req.url === '/v1/track') {
        if (trackStatus !== 202) {
          res.statusCode = trackStatus;
          return res.end(JSON.stringify({ error: true, message: 'Service unavailable' }));
        }
        tracked.push({ headers: req.headers, events: json.events ?? [] });
        res.statusCode = 202;
        return res.end(JSON.stringify({ accepted: json.events?.length ?? 0 }));
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ error: true, message: 'Not found' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => server.close());

afterEach(() => {
  tracked.length = 0;
  trackStatus = 202;
});

const options = () => ({ baseUrl, projectKey: 'pk_test', environmentKey: 'ek_test', flushIntervalMs: 60_000, logger: { warn: () => undefined } });
const allEvents = () => tracked.flatMap((request) => request.events);

describe('FlagpostProvider with @openfeature/server-sdk', () => {
  afterEach(() => ServerOpenFeature.close());

  it('reports each user once per flag and variant, and tracks with the value and attributes, on close', async () => {
    await ServerOpenFeature.setProviderAndWait(new FlagpostProvider(options()));
    const client = ServerOpenFeature.getClient();
    for (const user of ['user-1', 'user-2', 'user-1', 'user-2']) {
      await client.getBooleanValue('checkout', false, { targetingKey: user });
    }
    await client.getBooleanValue('fixed', false, { targetingKey: 'user-1' });
    await client.getBooleanValue('checkout', false, {});
    client.track('purchase', { targetingKey: 'user-2' }, { value: 12.5, plan: 'pro' });
    client.track('purchase', {}, { value: 1 });
    assert.equal(tracked.length, 0, 'nothing is sent before the interval or close');
    await ServerOpenFeature.close();

    assert.equal(tracked.length, 1);
    assert.equal(tracked[0]!.headers['x-project-key'], 'pk_test');
    assert.equal(tracked[0]!.headers['x-environment-key'], 'ek_test');
    const events = allEvents().map(({ timestamp, ...rest }) => {
      assert.ok(!Number.isNaN(Date.parse(String(timestamp))));
      return rest;
    });
    assert.deepEqual(events, [
      { kind: 'exposure', flagKey: 'checkout', variant: 'control', targetingKey: 'user-1' },
      { kind: 'exposure', flagKey: 'checkout', variant: 'treatment', targetingKey: 'user-2' },
      { kind: 'track', name: 'purchase', targetingKey: 'user-2', value: 12.5, attributes: { plan: 'pro' } },
    ]);
  });

  it('sends a full batch at once, in batches of maxBatchSize', async () => {
    await ServerOpenFeature.setProviderAndWait(new FlagpostProvider({ ...options(), maxBatchSize: 10 }));
    const client = ServerOpenFeature.getClient();
    for (let i = 0; i < 25; i++) client.track('click', { targetingKey: `user-${i}` });
    await ServerOpenFeature.close();
    assert.deepEqual(
      tracked.map((request) => request.events.length),
      [10, 10, 5],
    );
  });

  it('keeps what Flagpost could not take and sends it on the next flush', async () => {
    const provider = new FlagpostProvider(options());
    await ServerOpenFeature.setProviderAndWait(provider);
    const client = ServerOpenFeature.getClient();
    trackStatus = 503;
    client.track('signup', { targetingKey: 'user-7' });
    await provider.flush();
    assert.equal(tracked.length, 0);
    trackStatus = 202;
    await provider.flush();
    assert.deepEqual(
      allEvents().map((event) => event.name),
      ['signup'],
    );
  });

  it('drops a batch the server refused as bad instead of sending it forever', async () => {
    const warnings: unknown[][] = [];
    const provider = new FlagpostProvider({ ...options(), logger: { warn: (...args: unknown[]) => warnings.push(args) } });
    await ServerOpenFeature.setProviderAndWait(provider);
    trackStatus = 400;
    ServerOpenFeature.getClient().track('signup', { targetingKey: 'user-8' });
    await provider.flush();
    trackStatus = 202;
    await provider.flush();
    assert.equal(tracked.length, 0);
    assert.equal(warnings.length, 1);
  });

  it('reports no exposures when told not to', async () => {
    await ServerOpenFeature.setProviderAndWait(new FlagpostProvider({ ...options(), exposures: false }));
    await ServerOpenFeature.getClient().getBooleanValue('checkout', false, { targetingKey: 'user-1' });
    await ServerOpenFeature.close();
    assert.equal(tracked.length, 0);
  });
});

describe('FlagpostWebProvider with @openfeature/web-sdk', () => {
  afterEach(() => WebOpenFeature.close());

  it('reports the exposure of the evaluated split flag and tracks, on close', async () => {
    await WebOpenFeature.setContext({ targetingKey: 'user-4' });
    await WebOpenFeature.setProviderAndWait(new FlagpostWebProvider({ ...options(), cacheMode: 'disabled', changeDetection: 'none' }));
    const client = WebOpenFeature.getClient();
    assert.equal(client.getBooleanValue('checkout', false), true);
    assert.equal(client.getBooleanValue('checkout', false), true);
    assert.equal(client.getBooleanValue('fixed', false), true);
    client.track('purchase', { value: 30 });
    await WebOpenFeature.close();
    const events = allEvents().map(({ timestamp: _timestamp, ...rest }) => rest);
    assert.deepEqual(events, [
      { kind: 'exposure', flagKey: 'checkout', variant: 'treatment', targetingKey: 'user-4' },
      { kind: 'track', name: 'purchase', targetingKey: 'user-4', value: 30 },
    ]);
  });
});
