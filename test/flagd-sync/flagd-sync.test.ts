import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { FlagdProvider } from '@openfeature/flagd-provider';
import { OpenFeature, ProviderEvents } from '@openfeature/server-sdk';
import { FlagdSyncServer } from '../../src/flagd-sync/index.ts';
import { ADMIN_TOKEN, createTestDatabase, forEachDialect, startInstance, type TestContext } from '../support/context.ts';
import { createProject, type ProjectFixture } from '../support/fixtures.ts';
import { freePort, startServerProcess, waitForHealth } from '../support/process.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

// Issue 21, flagd's sync service: the published flagd provider in in-process mode against Flagpost.

const PROTO = path.resolve(import.meta.dirname, '../../src/flagd-sync/flagd-sync.proto');
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { defaults: true })) as unknown as {
  flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
};

interface RawClient extends grpc.Client {
  FetchAllFlags(req: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r: { flagConfiguration: string }) => void): void;
  SyncFlags(req: unknown, md?: grpc.Metadata): grpc.ClientReadableStream<{ flagConfiguration: string }>;
  GetMetadata(
    req: unknown,
    md: grpc.Metadata,
    cb: (e: grpc.ServiceError | null, r: { metadata: { fields: Record<string, { stringValue: string }> } }) => void,
  ): void;
}

const rawClient = (port: number) => new loaded.flagd.sync.v1.FlagSyncService(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as RawClient;

function fetchAll(client: RawClient, selector: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const md = new grpc.Metadata();
    if (selector) md.set('flagd-selector', selector);
    client.FetchAllFlags({ selector }, md, (error, answer) => (error ? reject(error) : resolve(answer.flagConfiguration)));
  });
}

/** The first message or the error of a SyncFlags stream. */
function firstOfStream(
  client: RawClient,
  selector: string,
): Promise<{ stream: grpc.ClientReadableStream<{ flagConfiguration: string }>; first: Promise<string> }> {
  const md = new grpc.Metadata();
  md.set('flagd-selector', selector);
  const stream = client.SyncFlags({ selector }, md);
  const first = new Promise<string>((resolve, reject) => {
    stream.once('data', (d: { flagConfiguration: string }) => resolve(d.flagConfiguration));
    stream.once('error', reject);
  });
  first.catch(() => {});
  return Promise.resolve({ stream, first });
}

let domains = 0;
/** A flagd provider in in-process mode on its own OpenFeature domain, ready. */
async function connectProvider(port: number, selector: string) {
  const domain = `flagd-${++domains}`;
  const provider = new FlagdProvider({ resolverType: 'in-process', host: '127.0.0.1', port, selector, retryBackoffMaxMs: 500, deadlineMs: 2000 });
  await OpenFeature.setProviderAndWait(domain, provider);
  const client = OpenFeature.getClient(domain);
  return { provider, client, close: () => provider.onClose() };
}

/** Resolves at the provider's next configuration change (a generous timeout: no timed assertion). */
function nextChange(client: ReturnType<typeof OpenFeature.getClient>, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no configuration change within the timeout')), timeoutMs);
    const handler = () => {
      clearTimeout(timer);
      client.removeHandler(ProviderEvents.ConfigurationChanged, handler);
      resolve();
    };
    client.addHandler(ProviderEvents.ConfigurationChanged, handler);
  });
}

/** Flags with rules, splits, segments and prerequisites-free targeting, through the admin API. */
async function seedTargeting(
  admin: (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => Promise<{ statusCode: number; body: string }>,
  projectKey: string,
  envKey: string,
) {
  const base = `/admin/v1/projects/${projectKey}`;
  const ok = async (res: Promise<{ statusCode: number; body: string }>) => {
    const r = await res;
    assert.ok(r.statusCode < 300, r.body);
  };
  await ok(admin('POST', `${base}/segments`, { key: 'staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }] }));
  await ok(
    admin('POST', `${base}/segments`, { key: 'alps', match: 'any', conditions: [{ attribute: 'country', operator: 'in', values: ['CH', 'AT', 'LI'] }] }),
  );
  await ok(admin('POST', `${base}/flags`, { slug: 'new-ui', enabled: true }));
  await ok(
    admin('POST', `${base}/flags`, {
      slug: 'theme',
      type: 'string',
      variants: { dark: 'dark', light: 'light', auto: 'auto' },
      defaultVariant: 'auto',
      enabled: true,
    }),
  );
  await ok(admin('POST', `${base}/flags`, { slug: 'limit', type: 'number', variants: { low: 10, high: 100 }, defaultVariant: 'low', enabled: true }));
  await ok(admin('POST', `${base}/flags`, { slug: 'checkout', enabled: false }));
  const flag = (slug: string) => `${base}/environments/${envKey}/flags/${slug}`;
  await ok(
    admin('PATCH', flag('theme'), {
      rules: [
        { id: 'staff', segments: ['staff'], serve: { variant: 'dark' } },
        { id: 'alps', segments: ['alps'], conditions: [{ attribute: 'age', operator: 'gte', values: [18] }], serve: { variant: 'light' } },
        {
          id: 'rest',
          serve: {
            split: {
              weights: [
                { variant: 'dark', weight: 30 },
                { variant: 'light', weight: 70 },
              ],
            },
          },
        },
      ],
    }),
  );
  await ok(
    admin('PATCH', flag('limit'), {
      rules: [{ id: 'big', conditions: [{ attribute: 'plan', operator: 'in', values: ['pro', 'team'] }], serve: { variant: 'high' } }],
    }),
  );
  await ok(
    admin('PATCH', flag('checkout'), {
      rules: [
        {
          id: 'half',
          serve: {
            split: {
              weights: [
                { variant: 'on', weight: 50 },
                { variant: 'off', weight: 50 },
              ],
            },
          },
        },
      ],
    }),
  );
}

const contexts = Array.from({ length: 60 }, (_, i) => ({
  targetingKey: `user-${i}`,
  ...(i % 5 === 0 ? { email: `p${i}@example.com` } : { email: `p${i}@mail.test` }),
  country: ['CH', 'DE', 'AT', 'US', 'LI'][i % 5]!,
  age: 12 + ((i * 7) % 50),
  plan: ['free', 'pro', 'team'][i % 3]!,
}));

async function rotate(ctx: TestContext, projectKey: string, envKey: string): Promise<string> {
  const res = await ctx.admin('POST', `/admin/v1/projects/${projectKey}/environments/${envKey}/flagd-sync-token`);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().selector as string;
}

forEachDialect('flagd sync service', (ctx) => {
  let project: ProjectFixture;
  let selector: string;
  let port: number;
  const envKey = () => project.environments[0]!.key;
  const base = () => `/admin/v1/projects/${project.key}/environments/${envKey()}`;
  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) => ctx().admin(method, url, body);

  before(async () => {
    project = await createProject(ctx());
    await seedTargeting(admin, project.key, envKey());
    selector = await rotate(ctx(), project.key, envKey());
    port = await ctx().services.flagdSyncServer.listen('127.0.0.1', 0);
  });

  it('answers FetchAllFlags with the same document as the admin GET .../flagd, and GetMetadata with the keys', async () => {
    const client = rawClient(port);
    try {
      const served = JSON.parse(await fetchAll(client, selector));
      const exported = (await ctx().admin('GET', `${base()}/flagd`)).json();
      assert.deepEqual(served, exported);
      assert.ok(served.flags.theme.targeting, 'rules travel as JSON Logic');
      assert.ok(served.$evaluators.staff, 'segments travel as $evaluators');
      const md = new grpc.Metadata();
      md.set('flagd-selector', selector);
      const meta = await new Promise<{ metadata: { fields: Record<string, { stringValue: string }> } }>((resolve, reject) =>
        client.GetMetadata({}, md, (e, r) => (e ? reject(e) : resolve(r))),
      );
      assert.equal(meta.metadata.fields.flagpostProject?.stringValue, project.key);
      assert.equal(meta.metadata.fields.flagpostEnvironment?.stringValue, envKey());
    } finally {
      client.close();
    }
  });

  it("evaluates locally in the published flagd provider exactly as Flagpost's OFREP answers and its playground, for 60 contexts", async () => {
    const { client, close } = await connectProvider(port, selector);
    try {
      let compared = 0;
      for (const context of contexts) {
        const ofrep = await ctx().app.inject({
          method: 'POST',
          url: '/ofrep/v1/evaluate/flags',
          headers: { 'x-project-key': project.key, 'x-environment-key': envKey(), 'content-type': 'application/json' },
          payload: JSON.stringify({ context }),
        });
        assert.equal(ofrep.statusCode, 200, ofrep.body);
        const answers = (ofrep.json().flags as Array<{ key: string; value: unknown; variant?: string }>).filter((f) => !f.key.includes(':'));
        const playground = (await ctx().admin('POST', `${base()}/evaluate`, { context })).json().flags as Array<{
          key: string;
          value: unknown;
          variant?: string;
        }>;
        assert.deepEqual(
          answers.map((a) => ({ key: a.key, value: a.value, variant: a.variant })).sort((x, y) => x.key.localeCompare(y.key)),
          playground.map((a) => ({ key: a.key, value: a.value, variant: a.variant })).sort((x, y) => x.key.localeCompare(y.key)),
        );
        for (const want of answers) {
          const got =
            typeof want.value === 'string'
              ? await client.getStringDetails(want.key, 'fallback', context)
              : typeof want.value === 'number'
                ? await client.getNumberDetails(want.key, -1, context)
                : await client.getBooleanDetails(want.key, false, context);
          assert.deepEqual(
            { value: got.value, variant: got.variant },
            { value: want.value, variant: want.variant },
            `${want.key} for ${JSON.stringify(context)}`,
          );
          compared++;
        }
      }
      assert.equal(compared, contexts.length * 4);
    } finally {
      await close();
    }
  });

  it('pushes a change made through the admin API to the provider', async (t) => {
    const { client, close } = await connectProvider(port, selector);
    try {
      assert.equal(await client.getNumberValue('limit', -1, { plan: 'free' }), 10);
      const changed = nextChange(client);
      const start = performance.now();
      const res = await ctx().admin('PATCH', `${base()}/flags/limit`, { defaultVariant: 'high' });
      assert.equal(res.statusCode, 200, res.body);
      await changed;
      t.diagnostic(`admin write to provider change: ${(performance.now() - start).toFixed(1)} ms`);
      assert.equal(await client.getNumberValue('limit', -1, { plan: 'free' }), 100);
    } finally {
      await close();
    }
  });

  it('refuses a wrong, unknown or empty selector alike with UNAUTHENTICATED, and another environment is not readable with this token', async () => {
    const client = rawClient(port);
    try {
      const wrong = ['flagpost:fps_guessed0000000000000000000000000000000000000', `${project.key}/${envKey()}`, '', 'flagSetId=app'];
      for (const bad of wrong) {
        await assert.rejects(fetchAll(client, bad), (e: grpc.ServiceError) => {
          assert.equal(e.code, grpc.status.UNAUTHENTICATED);
          assert.equal(e.details, 'The selector is not a valid flagd sync token of this Flagpost');
          return true;
        });
      }
      const { first } = await firstOfStream(client, 'flagpost:fps_nope');
      await assert.rejects(first, (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
      const other = JSON.parse(await fetchAll(client, await rotate(ctx(), project.key, project.environments[1]!.key)));
      assert.deepEqual(other, (await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${project.environments[1]!.key}/flagd`)).json());
      assert.notDeepEqual(other, JSON.parse(await fetchAll(client, selector)));
    } finally {
      client.close();
    }
  });

  describe('limits, throttle and revocation (a server of its own)', () => {
    let server: FlagdSyncServer;
    let own: number;
    before(async () => {
      server = new FlagdSyncServer({
        service: ctx().services.flagdSync,
        watch: (w) => ctx().services.reads.watch(w),
        log: ctx().services.log,
        perClient: 2,
        maxFailures: 3,
        recheckMs: 200,
      });
      own = await server.listen('127.0.0.1', 0);
    });
    after(async () => server.close());

    it('holds the per-address cap of open streams, and frees a place when a stream closes', async () => {
      const client = rawClient(own);
      try {
        const a = await firstOfStream(client, selector);
        const b = await firstOfStream(client, selector);
        await a.first;
        await b.first;
        const c = await firstOfStream(client, selector);
        await assert.rejects(
          c.first,
          (e: grpc.ServiceError) => e.code === grpc.status.RESOURCE_EXHAUSTED && e.details === 'Too many open sync streams from this address',
        );
        a.stream.cancel();
        await new Promise((r) => setTimeout(r, 200));
        const d = await firstOfStream(client, selector);
        assert.ok(JSON.parse(await d.first).flags);
        b.stream.cancel();
        d.stream.cancel();
      } finally {
        client.close();
      }
    });

    it('ends the streams of a rotated token and refuses it from then on', async () => {
      const client = rawClient(own);
      try {
        const s = await firstOfStream(client, selector);
        await s.first;
        const ended = new Promise<grpc.ServiceError>((resolve) => s.stream.on('error', resolve));
        selector = await rotate(ctx(), project.key, envKey());
        const error = await ended;
        assert.equal(error.code, grpc.status.UNAUTHENTICATED);
        assert.ok(JSON.parse(await fetchAll(client, selector)).flags, 'the new token works');
      } finally {
        client.close();
      }
    });

    it('throttles an address after repeated refused selectors, even for a valid one', async () => {
      const client = rawClient(own);
      try {
        for (let i = 0; i < 3; i++)
          await assert.rejects(fetchAll(client, `flagpost:fps_wrong${i}`), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
        await assert.rejects(
          fetchAll(client, selector),
          (e: grpc.ServiceError) => e.code === grpc.status.RESOURCE_EXHAUSTED && /Too many refused selectors/.test(e.details),
        );
      } finally {
        client.close();
      }
    });
  });

  it('shows the token only when created: viewers see whether one exists, never the token', async () => {
    const info = (await ctx().admin('GET', `${base()}/flagd-sync-token`)).json();
    assert.equal(info.configured, true);
    assert.equal(info.prefix, selector.slice('flagpost:'.length, 'flagpost:'.length + 8));
    assert.equal(JSON.stringify(info).includes(selector.slice(9)), false);
    const revoke = await ctx().admin('DELETE', `${base()}/flagd-sync-token`);
    assert.equal(revoke.statusCode, 204);
    assert.deepEqual((await ctx().admin('GET', `${base()}/flagd-sync-token`)).json(), { configured: false, prefix: null, createdAt: null });
    const client = rawClient(port);
    try {
      await assert.rejects(fetchAll(client, selector), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
    } finally {
      client.close();
    }
  });
});

describe('flagd sync across a restart of the Flagpost process', () => {
  it('keeps the provider evaluating while Flagpost restarts, and delivers the change made after the restart', async (t) => {
    const database = await createTestDatabase('sqlite');
    const httpPort = freePort();
    const syncPort = freePort();
    const env = { ...database.env, FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN, PORT: String(httpPort), FLAGPOST_FLAGD_SYNC_PORT: String(syncPort) };
    let server = startServerProcess(t, env);
    const providers: Array<Awaited<ReturnType<typeof connectProvider>>> = [];
    t.after(async () => {
      for (const p of providers) await p.close();
      server.child.kill('SIGKILL');
      await database.drop();
    });
    await waitForHealth(httpPort, 60_000);
    const admin = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${httpPort}${url}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { statusCode: res.status, body: await res.text() };
    };
    const created = await admin('POST', '/admin/v1/projects', { name: 'Restart' });
    assert.equal(created.statusCode, 201, created.body);
    const project = JSON.parse(created.body) as ProjectFixture;
    const envKey = project.environments[0]!.key;
    await seedTargeting(admin, project.key, envKey);
    const token = await admin('POST', `/admin/v1/projects/${project.key}/environments/${envKey}/flagd-sync-token`);
    const { selector } = JSON.parse(token.body) as { selector: string };

    const provider = await connectProvider(syncPort, selector);
    providers.push(provider);
    const { client } = provider;
    const pro = { targetingKey: 'u1', plan: 'pro' };
    assert.equal(await client.getNumberValue('limit', -1, pro), 100);

    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output());
    assert.equal(await client.getNumberValue('limit', -1, pro), 100, 'evaluates from its copy while Flagpost is down');
    assert.equal(await client.getNumberValue('limit', -1, { plan: 'free' }), 10);

    server = startServerProcess(t, env);
    await waitForHealth(httpPort, 60_000).catch((error) => assert.fail(`${error}: ${server.output()}`));
    const ready = new Promise<void>((resolve) => client.addHandler(ProviderEvents.Ready, () => resolve()));
    await ready;
    const changed = nextChange(client);
    const start = performance.now();
    const patched = await admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey}/flags/limit`, { rules: [] });
    assert.equal(patched.statusCode, 200, patched.body);
    await changed;
    t.diagnostic(`after the restart, admin write to provider change: ${(performance.now() - start).toFixed(1)} ms`);
    assert.equal(await client.getNumberValue('limit', -1, pro), 10);
  });
});

describe('flagd sync with two instances on PostgreSQL', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('delivers a change made through instance A to a provider connected to instance B', async (t) => {
    const database = await createTestDatabase('postgres');
    const a = await startInstance(database, { FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN });
    const b = await startInstance(database, { FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN });
    const providers: Array<Awaited<ReturnType<typeof connectProvider>>> = [];
    t.after(async () => {
      for (const p of providers) await p.close();
      for (const i of [a, b]) {
        await i.app.close();
        await i.services.stop();
        await i.handle.close();
      }
      await database.drop();
    });
    const adminA = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
      a.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    const project = (await adminA('POST', '/admin/v1/projects', { name: 'Two' })).json() as ProjectFixture;
    const envKey = project.environments[0]!.key;
    await seedTargeting(adminA, project.key, envKey);
    const { selector } = (await adminA('POST', `/admin/v1/projects/${project.key}/environments/${envKey}/flagd-sync-token`)).json();
    const port = await b.services.flagdSyncServer.listen('127.0.0.1', 0);
    const provider = await connectProvider(port, selector);
    providers.push(provider);
    assert.equal(await provider.client.getStringValue('theme', 'x', { email: 'a@example.com' }), 'dark');
    const changed = nextChange(provider.client);
    const start = performance.now();
    const res = await adminA('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey}/flags/theme`, { rules: [] });
    assert.equal(res.statusCode, 200, res.body);
    await changed;
    t.diagnostic(`instance A write to provider on B: ${(performance.now() - start).toFixed(1)} ms`);
    assert.equal(await provider.client.getStringValue('theme', 'x', { email: 'a@example.com' }), 'auto');
  });

  it('keeps serving the last definition while PostgreSQL is away, and the change made after it returns', async (t) => {
    const database = await createTestDatabase('postgres');
    const target = new URL(database.env.DATABASE_URL!);
    const proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
    const viaProxy = new URL(target);
    viaProxy.port = String(proxy.port);
    const instance = await startInstance({ ...database, env: { ...database.env, DATABASE_URL: viaProxy.toString() } }, { FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN });
    const direct = await startInstance(database, { FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN });
    const clients: RawClient[] = [];
    let down = false;
    t.after(async () => {
      for (const c of clients) c.close();
      if (down) await proxy.restore();
      for (const i of [instance, direct]) {
        await i.app.close();
        await i.services.stop();
        await i.handle.close();
      }
      await proxy.close();
      await database.drop();
    });
    const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
      direct.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    const project = (await admin('POST', '/admin/v1/projects', { name: 'Outage' })).json() as ProjectFixture;
    const envKey = project.environments[0]!.key;
    await seedTargeting(admin, project.key, envKey);
    const { selector } = (await admin('POST', `/admin/v1/projects/${project.key}/environments/${envKey}/flagd-sync-token`)).json();
    const port = await instance.services.flagdSyncServer.listen('127.0.0.1', 0);
    const client = rawClient(port);
    clients.push(client);
    const { stream, first } = await firstOfStream(client, selector);
    const before = JSON.parse(await first);
    await proxy.cut();
    down = true;
    // A provider that reconnects meanwhile gets the last definition, not an error.
    assert.deepEqual(JSON.parse(await fetchAll(client, selector)), before);
    const next = new Promise<string>((resolve) => stream.once('data', (d: { flagConfiguration: string }) => resolve(d.flagConfiguration)));
    assert.equal((await admin('PATCH', `/admin/v1/projects/${project.key}/environments/${envKey}/flags/limit`, { rules: [] })).statusCode, 200);
    await proxy.restore();
    down = false;
    const after = JSON.parse(await next);
    assert.equal(after.flags.limit.targeting, undefined);
    assert.ok(before.flags.limit.targeting);
    stream.cancel();
  });
});
