import assert from 'node:assert/strict';
import path from 'node:path';
import { before, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { forEachDialect, type TestContext } from './support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from './support/fixtures.ts';
import { createMember, type Member } from './support/members.ts';

// Issue 29 item 2: a protected environment serves nothing new without review. Every admin route of the
// OpenAPI document is classified by what it may do to what `/v1`, OFREP and flagd sync answer in a
// protected environment; a new route fails the first test until someone classifies it. Every route that
// could change those answers is then called for real, as an editor (who is also a project admin: ADR
// 0033), with a request that would change production: each is refused, or turned into a change request,
// or shown to change nothing served; production's answers are compared on all three surfaces after each
// (a flag created meanwhile may appear, switched off).

type Doc = Record<string, any>;
type Res = { statusCode: number; body: string };

/**
 * `refused`: answers 403 or 409. `change_request`: answers 2xx and opens a change request instead of
 * writing. `unchanged`: allowed, and changes nothing production serves. `reads`: changes nothing.
 * `access`: decides who may read (keys and sync tokens), not what is served. `elsewhere`: acts on what
 * is not a flag, segment or environment of a project (forms, members, settings, webhooks, code references,
 * metrics, experiments and release templates: an experiment only counts what a split serves).
 * `release`: acts on a release, which a protected environment holds only when an owner started it with
 * `bypassProtection` (starting one there is `refused`); its approval then needs another member (issue 33).
 */
type Protection = 'refused' | 'change_request' | 'unchanged' | 'reads' | 'access' | 'elsewhere' | 'release';

const P = '/admin/v1/projects/{projectKey}';
const CR = `${P}/change-requests/{id}`;
const ROUTES: Record<string, Protection> = {
  [`POST ${P}/metrics`]: 'elsewhere',
  [`GET ${P}/metrics`]: 'reads',
  [`GET ${P}/metrics/{metricKey}`]: 'reads',
  [`PATCH ${P}/metrics/{metricKey}`]: 'elsewhere',
  [`DELETE ${P}/metrics/{metricKey}`]: 'elsewhere',
  [`POST ${P}/environments/{envKey}/experiments`]: 'elsewhere',
  [`GET ${P}/environments/{envKey}/experiments`]: 'reads',
  [`GET ${P}/environments/{envKey}/experiments/{experimentKey}`]: 'reads',
  [`PATCH ${P}/environments/{envKey}/experiments/{experimentKey}`]: 'elsewhere',
  [`DELETE ${P}/environments/{envKey}/experiments/{experimentKey}`]: 'elsewhere',
  [`POST ${P}/environments/{envKey}/experiments/{experimentKey}/start`]: 'elsewhere',
  [`POST ${P}/environments/{envKey}/experiments/{experimentKey}/stop`]: 'elsewhere',
  [`GET ${P}/environments/{envKey}/experiments/{experimentKey}/results`]: 'reads',
  [`GET ${P}/environments/{envKey}/experiments/{experimentKey}/results.csv`]: 'reads',
  [`POST ${P}/environments/{envKey}/flags/{slug}/releases`]: 'refused',
  [`GET ${P}/environments/{envKey}/flags/{slug}/releases`]: 'reads',
  [`GET ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}`]: 'reads',
  [`GET ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}/readings`]: 'reads',
  [`POST ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}/approve`]: 'release',
  [`POST ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}/pause`]: 'release',
  [`POST ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}/resume`]: 'release',
  [`POST ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}/rollback`]: 'release',
  [`POST ${P}/environments/{envKey}/flags/{slug}/releases/{releaseId}/cancel`]: 'release',
  [`POST ${P}/release-templates`]: 'elsewhere',
  [`GET ${P}/release-templates`]: 'reads',
  [`GET ${P}/release-templates/{templateKey}`]: 'reads',
  [`PATCH ${P}/release-templates/{templateKey}`]: 'elsewhere',
  [`DELETE ${P}/release-templates/{templateKey}`]: 'elsewhere',
  'POST /admin/v1/forms/{formKey}/spam-rules/dry-run': 'reads',
  'POST /admin/v1/forms/{formKey}/test-delivery': 'elsewhere',
  'POST /admin/v1/forms/{formKey}/deliveries/{deliveryId}/resend': 'elsewhere',
  'POST /admin/v1/forms/{formKey}/deliveries/resend-failed': 'elsewhere',
  'POST /admin/v1/forms/{formKey}/mail-preview': 'reads',
  'POST /admin/v1/forms/{formKey}/read-tokens': 'access',
  'GET /admin/v1/forms/{formKey}/read-tokens': 'reads',
  'DELETE /admin/v1/forms/{formKey}/read-tokens/{tokenId}': 'access',
  'GET /admin/v1/forms/{formKey}/analytics': 'reads',
  'POST /admin/v1/sessions': 'elsewhere',
  'GET /admin/v1/sessions/current': 'reads',
  'DELETE /admin/v1/sessions/current': 'elsewhere',
  'POST /admin/v1/users': 'elsewhere',
  'GET /admin/v1/users': 'reads',
  'PATCH /admin/v1/users/{id}': 'elsewhere',
  'DELETE /admin/v1/users/{id}': 'elsewhere',
  'POST /admin/v1/invitations': 'elsewhere',
  'GET /admin/v1/invitations': 'reads',
  'DELETE /admin/v1/invitations/{id}': 'elsewhere',
  'POST /admin/v1/invitations/accept': 'elsewhere',
  'GET /admin/v1/sso': 'reads',
  'GET /admin/v1/sso/start': 'elsewhere',
  'GET /admin/v1/sso/callback': 'elsewhere',
  'POST /admin/v1/me/password': 'elsewhere',
  'GET /admin/v1/me/tokens': 'reads',
  'POST /admin/v1/me/tokens': 'elsewhere',
  'DELETE /admin/v1/me/tokens/{id}': 'elsewhere',
  'GET /admin/v1/users/{id}/project-roles': 'reads',
  'PUT /admin/v1/users/{id}/project-roles/{projectKey}': 'access',
  'DELETE /admin/v1/users/{id}/project-roles/{projectKey}': 'access',
  'GET /admin/v1/settings': 'reads',
  'PATCH /admin/v1/settings': 'elsewhere',
  'POST /admin/v1/projects': 'unchanged',
  'GET /admin/v1/projects': 'reads',
  [`GET ${P}`]: 'reads',
  [`PATCH ${P}`]: 'unchanged',
  [`DELETE ${P}`]: 'refused',
  [`DELETE ${P}/environments/{envKey}`]: 'refused',
  [`POST ${P}/environments`]: 'unchanged',
  [`POST ${P}/api-keys`]: 'access',
  [`PATCH ${P}/environments/{envKey}`]: 'refused',
  [`GET ${P}/change-requests`]: 'reads',
  [`POST ${P}/change-requests`]: 'change_request',
  [`GET ${CR}`]: 'reads',
  [`PATCH ${CR}`]: 'unchanged',
  [`POST ${CR}/submit`]: 'unchanged',
  [`POST ${CR}/approve`]: 'unchanged',
  [`POST ${CR}/reject`]: 'unchanged',
  [`POST ${CR}/cancel`]: 'unchanged',
  [`POST ${CR}/apply`]: 'refused',
  [`POST ${CR}/comments`]: 'unchanged',
  [`PUT ${CR}/schedule`]: 'refused',
  [`DELETE ${CR}/schedule`]: 'unchanged',
  [`GET ${P}/compare`]: 'reads',
  [`POST ${P}/promote`]: 'change_request',
  [`POST ${P}/environments/{envKey}/flags/{slug}/revert`]: 'change_request',
  [`GET ${P}/api-keys`]: 'reads',
  [`POST ${P}/webhooks`]: 'elsewhere',
  [`GET ${P}/webhooks`]: 'reads',
  [`GET ${P}/webhooks/{id}`]: 'reads',
  [`PATCH ${P}/webhooks/{id}`]: 'elsewhere',
  [`DELETE ${P}/webhooks/{id}`]: 'elsewhere',
  [`GET ${P}/webhooks/{id}/deliveries`]: 'reads',
  [`POST ${P}/webhooks/{id}/deliveries/{deliveryId}/redeliver`]: 'elsewhere',
  [`DELETE ${P}/api-keys/{id}`]: 'access',
  [`POST ${P}/flags`]: 'change_request',
  [`GET ${P}/flags`]: 'reads',
  [`PATCH ${P}/environments/{envKey}/flags/{slug}`]: 'refused',
  [`PATCH ${P}/flags/{slug}`]: 'refused',
  [`DELETE ${P}/flags/{slug}`]: 'refused',
  [`GET ${P}/usage`]: 'reads',
  [`GET ${P}/flags/{slug}/usage`]: 'reads',
  [`GET ${P}/segments`]: 'reads',
  [`POST ${P}/segments`]: 'unchanged',
  [`GET ${P}/segments/{segmentKey}`]: 'reads',
  [`PATCH ${P}/segments/{segmentKey}`]: 'refused',
  [`DELETE ${P}/segments/{segmentKey}`]: 'refused',
  [`GET ${P}/environments/{envKey}/flagd`]: 'reads',
  [`PUT ${P}/environments/{envKey}/flagd`]: 'refused',
  [`GET ${P}/document`]: 'reads',
  'POST /admin/v1/documents/apply': 'change_request',
  'POST /admin/v1/imports/unleash': 'change_request',
  [`GET ${P}/environments/{envKey}/flagd-sync-token`]: 'reads',
  [`POST ${P}/environments/{envKey}/flagd-sync-token`]: 'access',
  [`DELETE ${P}/environments/{envKey}/flagd-sync-token`]: 'access',
  [`POST ${P}/environments/{envKey}/evaluate`]: 'reads',
  [`GET ${P}/environments/{envKey}/flags/{slug}/feedback`]: 'reads',
  [`GET ${P}/code-refs`]: 'reads',
  [`DELETE ${P}/code-refs`]: 'elsewhere',
  [`GET ${P}/code-refs/removals`]: 'reads',
  [`GET ${P}/stale-flags`]: 'reads',
  'POST /admin/v1/forms': 'elsewhere',
  'GET /admin/v1/forms': 'reads',
  'GET /admin/v1/forms/{formKey}': 'reads',
  'PATCH /admin/v1/forms/{formKey}': 'elsewhere',
  'POST /admin/v1/forms/{formKey}/webhook-secret': 'elsewhere',
  'DELETE /admin/v1/forms/{formKey}': 'elsewhere',
  'GET /admin/v1/forms/{formKey}/submissions': 'reads',
  'GET /admin/v1/forms/{formKey}/submissions.csv': 'reads',
  'GET /admin/v1/forms/{formKey}/submissions.json': 'reads',
  'GET /admin/v1/forms/{formKey}/submissions/{id}': 'reads',
  'PATCH /admin/v1/forms/{formKey}/submissions/{id}': 'elsewhere',
  'DELETE /admin/v1/forms/{formKey}/submissions/{id}': 'elsewhere',
  'GET /admin/v1/forms/{formKey}/submissions/{id}/files/{fileId}': 'reads',
  'POST /admin/v1/personal-data/export': 'elsewhere',
  'POST /admin/v1/personal-data/erase': 'elsewhere',
  'GET /admin/v1/audit': 'reads',
};

const PROTO = path.resolve(import.meta.dirname, '../src/flagd-sync/flagd-sync.proto');
const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { defaults: true })) as unknown as {
  flagd: { sync: { v1: { FlagSyncService: grpc.ServiceClientConstructor } } };
};
interface SyncClient extends grpc.Client {
  FetchAllFlags(req: unknown, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r: { flagConfiguration: string }) => void): void;
}

const CONTEXTS = [
  {},
  { targetingKey: 'u1', email: 'ann@example.com' },
  { targetingKey: 'u2', country: 'NL' },
  ...Array.from({ length: 8 }, (_, i) => ({ targetingKey: `user-${i}`, country: i % 2 ? 'NL' : 'FR' })),
];

/** What one environment serves, keyed by surface and flag: `/v1`, OFREP per context, flagd sync. */
type Served = Map<string, string>;

const ok = (res: Res, status = 200): Doc => {
  assert.equal(res.statusCode, status, res.body);
  return JSON.parse(res.body) as Doc;
};

forEachDialect('protected environments on every route', (ctx) => {
  let project: ProjectFixture;
  let owner: Member;
  let editor: Member;
  let other: Member;
  let sync: SyncClient;
  let selector = '';
  const base = () => `/admin/v1/projects/${project.key}`;
  const prod = () => project.environments[2]!;

  async function served(c: TestContext): Promise<Served> {
    const out: Served = new Map();
    const v1 = ok(await c.app.inject({ method: 'GET', url: '/v1/flags', headers: keys(project, 2) }));
    for (const flag of v1.flags as Doc[]) out.set(`v1 ${flag.slug}`, JSON.stringify(flag));
    for (const [i, context] of CONTEXTS.entries()) {
      const res = await c.app.inject({
        method: 'POST',
        url: '/ofrep/v1/evaluate/flags',
        headers: { 'content-type': 'application/json', ...keys(project, 2) },
        payload: JSON.stringify({ context }),
      });
      for (const flag of ok(res).flags as Doc[]) out.set(`ofrep ${i} ${flag.key}`, JSON.stringify(flag));
    }
    const flagd = await new Promise<string>((resolve, reject) => {
      const md = new grpc.Metadata();
      md.set('flagd-selector', selector);
      sync.FetchAllFlags({ selector }, md, (error, answer) => (error ? reject(error) : resolve(answer.flagConfiguration)));
    });
    const { flags, $evaluators, ...rest } = JSON.parse(flagd) as Doc;
    for (const [key, flag] of Object.entries(flags as Doc)) out.set(`flagd ${key}`, JSON.stringify(flag));
    for (const [key, evaluator] of Object.entries(($evaluators ?? {}) as Doc)) out.set(`flagd $evaluators ${key}`, JSON.stringify(evaluator));
    out.set('flagd (document)', JSON.stringify(rest));
    return out;
  }

  /**
   * What differs from `before`, but for flags that appeared switched off (no value, no payload) and
   * flagd evaluators (segments) that no flag refers to.
   */
  function differences(before: Served, after: Served): string[] {
    const problems: string[] = [];
    for (const [key, value] of before) if (after.get(key) !== value) problems.push(`${key}: ${value} -> ${after.get(key)}`);
    const flagdFlags = [...after].filter(([key]) => key.startsWith('flagd ') && !key.startsWith('flagd $')).map(([, value]) => value);
    for (const [key, value] of after) {
      if (before.has(key)) continue;
      const flag = JSON.parse(value) as Doc;
      const off = key.startsWith('flagd $evaluators ')
        ? !flagdFlags.some((f) => f.includes(`"$ref":${JSON.stringify(key.slice('flagd $evaluators '.length))}`))
        : key.startsWith('v1 ')
          ? flag.enabled === false && (flag.payload ?? null) === null
          : key.startsWith('ofrep ')
            ? flag.value === false || (flag.value ?? null) === null || flag.reason === 'DISABLED'
            : flag.state === 'DISABLED' || (flag.variants?.[flag.defaultVariant] === false && flag.targeting === undefined);
      if (!off) problems.push(`${key}: new and not off: ${value}`);
    }
    return problems;
  }

  /** The open change requests at their revisions: one opened or revised changes this. */
  const openRequests = async (): Promise<string> =>
    JSON.stringify(ok(await owner.call('GET', `${base()}/change-requests`)).changeRequests.map((r: Doc) => [r.id, r.revision]));

  /** A change request in production by `other` (so that the editor may review it), submitted. */
  const request = async (values: Doc = { enabled: true }): Promise<Doc> =>
    ok(
      await other.call('POST', `${base()}/change-requests`, { environment: prod().key, title: 'Walk', flags: [{ slug: 'checkout', values }], submit: true }),
      201,
    );

  /** Production's audit entry of a flag's last write there (for reverts). */
  const lastWrite = async (slug: string): Promise<string> => {
    const audit = ok(await owner.call('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=${slug}`));
    return audit.entries.find((e: Doc) => e.environmentKey === prod().key && e.action === 'flag.updated').id;
  };

  /** The request each route that may touch production is tried with, as the editor. */
  const PROBES: Record<string, () => Promise<Res>> = {
    [`POST ${P}/environments/{envKey}/flags/{slug}/releases`]: () =>
      editor.call('POST', `${base()}/environments/${prod().key}/flags/checkout/releases`, {
        variant: 'on',
        baseline: 'off',
        steps: [{ percent: 100 }],
        guardrails: [],
      }),
    [`DELETE ${P}`]: () => editor.call('DELETE', base()),
    [`DELETE ${P}/environments/{envKey}`]: () => editor.call('DELETE', `${base()}/environments/${prod().key}`),
    [`PATCH ${P}/environments/{envKey}`]: () => editor.call('PATCH', `${base()}/environments/${prod().key}`, { protected: false }),
    [`PATCH ${P}/environments/{envKey}/flags/{slug}`]: () => editor.call('PATCH', `${base()}/environments/${prod().key}/flags/checkout`, { enabled: true }),
    [`PATCH ${P}/flags/{slug}`]: () => editor.call('PATCH', `${base()}/flags/checkout`, { slug: 'checkout-old' }),
    [`DELETE ${P}/flags/{slug}`]: () => editor.call('DELETE', `${base()}/flags/checkout`),
    [`PATCH ${P}/segments/{segmentKey}`]: () =>
      editor.call('PATCH', `${base()}/segments/staff`, { match: 'any', conditions: [{ attribute: 'x', operator: 'in', values: ['y'] }] }),
    [`DELETE ${P}/segments/{segmentKey}`]: () => editor.call('DELETE', `${base()}/segments/spare`),
    [`PUT ${P}/environments/{envKey}/flagd`]: () => editor.call('PUT', `${base()}/environments/${prod().key}/flagd`, { flags: {} }),
    [`POST ${CR}/apply`]: async () => editor.call('POST', `${base()}/change-requests/${(await request()).id}/apply`),
    [`PUT ${CR}/schedule`]: async () =>
      editor.call('PUT', `${base()}/change-requests/${(await request()).id}/schedule`, { at: new Date(Date.now() + 3_600_000).toISOString() }),
    [`POST ${P}/change-requests`]: () =>
      editor.call('POST', `${base()}/change-requests`, { environment: prod().key, title: 'Walk', flags: [{ slug: 'checkout', values: { enabled: true } }] }),
    [`POST ${P}/flags`]: () => editor.call('POST', `${base()}/flags`, { slug: 'new-checkout', enabled: true, payload: { price: 0 }, description: 'new' }),
    [`POST ${P}/promote`]: () =>
      editor.call('POST', `${base()}/promote`, { from: project.environments[1]!.key, to: prod().key, flags: ['checkout', 'banner'] }),
    [`POST ${P}/environments/{envKey}/flags/{slug}/revert`]: async () =>
      editor.call('POST', `${base()}/environments/${prod().key}/flags/banner/revert`, { auditId: await lastWrite('banner') }),
    'POST /admin/v1/documents/apply': async () => {
      const doc = ok(await owner.call('GET', `${base()}/document`));
      doc.flags.checkout.environments[prod().name].defaultVariant = 'on';
      doc.flags.applied = {
        type: 'boolean',
        environments: Object.fromEntries(doc.environments.map((e: string) => [e, { variants: { on: true, off: false }, defaultVariant: 'on' }])),
      };
      return editor.call('POST', '/admin/v1/documents/apply', { document: doc, projectKey: project.key, source: 'walk.yaml' });
    },
    'POST /admin/v1/imports/unleash': () =>
      editor.call('POST', '/admin/v1/imports/unleash', {
        export: { version: 2, features: [{ name: 'unleashed', enabled: true, strategies: [{ name: 'default' }] }] },
        projectKey: project.key,
        environment: prod().name,
      }),
    'POST /admin/v1/projects': () => editor.call('POST', '/admin/v1/projects', { name: 'Elsewhere' }),
    [`PATCH ${P}`]: () => editor.call('PATCH', base(), { name: 'Shop renamed' }),
    [`POST ${P}/environments`]: () => editor.call('POST', `${base()}/environments`, { name: 'sandbox' }),
    [`POST ${P}/segments`]: () =>
      editor.call('POST', `${base()}/segments`, { key: 'fresh', conditions: [{ attribute: 'country', operator: 'in', values: ['NL'] }] }),
    [`PATCH ${CR}`]: async () =>
      editor.call('PATCH', `${base()}/change-requests/${(await request()).id}`, { flags: [{ slug: 'checkout', values: { enabled: true, description: 'x' } }] }),
    [`POST ${CR}/submit`]: async () => {
      const draft = ok(
        await other.call('POST', `${base()}/change-requests`, {
          environment: prod().key,
          title: 'Draft',
          flags: [{ slug: 'checkout', values: { enabled: true } }],
        }),
        201,
      );
      return editor.call('POST', `${base()}/change-requests/${draft.id}/submit`);
    },
    [`POST ${CR}/approve`]: async () => editor.call('POST', `${base()}/change-requests/${(await request()).id}/approve`, { revision: 1 }),
    [`POST ${CR}/reject`]: async () => editor.call('POST', `${base()}/change-requests/${(await request()).id}/reject`),
    [`POST ${CR}/cancel`]: async () => editor.call('POST', `${base()}/change-requests/${(await request()).id}/cancel`),
    [`POST ${CR}/comments`]: async () => editor.call('POST', `${base()}/change-requests/${(await request()).id}/comments`, { body: 'hm' }),
    [`DELETE ${CR}/schedule`]: async () => {
      const cr = await request();
      ok(await owner.call('POST', `${base()}/change-requests/${cr.id}/approve`, { revision: 1 }));
      ok(await owner.call('PUT', `${base()}/change-requests/${cr.id}/schedule`, { at: new Date(Date.now() + 3_600_000).toISOString() }));
      return editor.call('DELETE', `${base()}/change-requests/${cr.id}/schedule`);
    },
  };

  let routes: string[] = [];

  before(async () => {
    owner = await createMember(ctx(), 'owner@example.com', 'owner');
    editor = await createMember(ctx(), 'editor@example.com', 'editor');
    other = await createMember(ctx(), 'other@example.com', 'editor');
    project = await createProject(ctx());
    ok(
      await owner.call('POST', `${base()}/segments`, { key: 'staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }] }),
      201,
    );
    ok(await owner.call('POST', `${base()}/segments`, { key: 'spare', conditions: [{ attribute: 'country', operator: 'in', values: ['BE'] }] }), 201);
    await createFlag(ctx(), project.key, { slug: 'checkout' });
    await createFlag(ctx(), project.key, { slug: 'banner', type: 'string', variants: { a: 'A', b: 'B' }, defaultVariant: 'a', enabled: true });
    for (const env of [1, 2]) {
      ok(
        await owner.call('PATCH', `${base()}/environments/${project.environments[env]!.key}/flags/banner`, {
          rules: [{ segments: ['staff'], serve: { variant: 'b' } }],
        }),
      );
      ok(await owner.call('PATCH', `${base()}/environments/${project.environments[env]!.key}/flags/checkout`, { enabled: env === 1 }));
    }
    ok(await owner.call('PATCH', `${base()}/environments/${prod().key}/flags/banner`, { defaultVariant: 'b' }));
    ok(await owner.call('PATCH', `${base()}/environments/${prod().key}`, { protected: true, requiredApprovals: 1 }));
    selector = ok(await owner.call('POST', `${base()}/environments/${prod().key}/flagd-sync-token`), 201).selector;
    const port = await ctx().services.flagdSyncServer.listen('127.0.0.1', 0);
    sync = new loaded.flagd.sync.v1.FlagSyncService(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as SyncClient;
    const doc = ok(await ctx().app.inject({ method: 'GET', url: '/openapi.json' })) as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths)
      .filter(([url]) => url.startsWith('/admin/'))
      .flatMap(([url, item]) =>
        Object.keys(item)
          .filter((m) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
          .map((m) => `${m.toUpperCase()} ${url}`),
      )
      .sort();
  });

  it('classifies every admin route of the OpenAPI document by what it may do to a protected environment, and only those', () => {
    assert.deepEqual(routes, Object.keys(ROUTES).sort());
    const probed = Object.entries(ROUTES)
      .filter(([, protection]) => ['refused', 'change_request', 'unchanged'].includes(protection))
      .map(([route]) => route)
      .sort();
    assert.deepEqual(Object.keys(PROBES).sort(), probed, 'each route that may touch production is tried');
  });

  it('refuses each route that would change production, turns the others into change requests, and production serves as before', async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const protection = ROUTES[route]!;
      const probe = PROBES[route];
      if (!probe) continue;
      const before = await served(ctx());
      const requestsBefore = await openRequests();
      const res = await probe();
      if (protection === 'refused' && ![403, 409].includes(res.statusCode))
        problems.push(`${route}: ${res.statusCode}, not refused: ${res.body.slice(0, 200)}`);
      if (protection !== 'refused' && (res.statusCode < 200 || res.statusCode > 299)) problems.push(`${route}: ${res.statusCode}: ${res.body.slice(0, 200)}`);
      if (protection === 'change_request' && (await openRequests()) === requestsBefore) problems.push(`${route}: no change request opened or revised`);
      problems.push(...differences(before, await served(ctx())).map((d) => `${route} changed production: ${d}`));
      project = ok(await owner.call('GET', base())) as ProjectFixture;
    }
    assert.deepEqual(problems, []);
  });

  it('sees a write to production on every surface (the comparison can fail)', async () => {
    const before = await served(ctx());
    ok(await owner.call('PATCH', `${base()}/environments/${prod().key}/flags/checkout?bypassProtection=true`, { enabled: true, payload: { shown: true } }));
    const changed = differences(before, await served(ctx()));
    for (const surface of ['v1 checkout', 'ofrep 0 checkout', 'flagd checkout']) {
      assert.ok(
        changed.some((d) => d.startsWith(`${surface}:`)),
        `${surface} in ${changed.join('\n')}`,
      );
    }
  });

  it('creates a flag switched off in a protected environment, with what was asked for in a change request that applies it', async () => {
    const created = ok(
      await editor.call('POST', `${base()}/flags`, {
        slug: 'launch',
        type: 'string',
        variants: { x: 'X', y: 'Y' },
        defaultVariant: 'y',
        enabled: true,
        payload: { n: 1 },
      }),
      201,
    );
    const inProd = created.environments[2];
    assert.deepEqual([inProd.enabled, inProd.payload, created.environments[0].enabled], [false, null, true]);
    assert.equal(created.changeRequests.length, 1);
    assert.equal(created.changeRequests[0].environment.key, prod().key);
    const url = `${base()}/change-requests/${created.changeRequests[0].id}`;
    const cr = ok(await owner.call('GET', url));
    assert.deepEqual(
      [cr.status, cr.author.split(' ')[0], cr.changes[0].config.payload, cr.changes[0].config.defaultVariant],
      ['in_review', 'editor@example.com', { n: 1 }, 'y'],
    );
    ok(await other.call('POST', `${url}/approve`, { revision: 1 }));
    ok(await other.call('POST', `${url}/apply`));
    const flag = ok(await owner.call('GET', `${base()}/flags`)).flags.find((f: Doc) => f.slug === 'launch').environments[2];
    assert.deepEqual([flag.enabled, flag.payload, flag.defaultVariant], [true, { n: 1 }, 'y']);
    // Preview settings cannot wait in a change request; an owner may bypass, recorded.
    const preview = await editor.call('POST', `${base()}/flags`, { slug: 'peek', isPreview: true, previewName: 'Peek' });
    assert.equal(preview.statusCode, 409, preview.body);
    const bypassed = ok(await owner.call('POST', `${base()}/flags?bypassProtection=true`, { slug: 'hotfix', enabled: true }), 201);
    assert.deepEqual([bypassed.environments[2].enabled, bypassed.changeRequests], [true, []]);
    const audit = ok(await owner.call('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=hotfix`));
    assert.deepEqual(audit.entries[0].changes.protectionBypassed, { after: true });
    assert.equal((await editor.call('POST', `${base()}/flags?bypassProtection=true`, { slug: 'sneaky', enabled: true })).statusCode, 403);
  });

  it('refuses renames while an environment is protected, except an owner’s recorded bypass', async () => {
    const refused = await editor.call('PATCH', `${base()}/flags/checkout`, { slug: 'checkout-2' });
    assert.equal(refused.statusCode, 409);
    assert.match(refused.json().message, /protected environments/);
    ok(await editor.call('PATCH', `${base()}/flags/checkout`, { tags: ['payments'] }), 200);
    assert.equal((await editor.call('PATCH', `${base()}/flags/checkout?bypassProtection=true`, { slug: 'checkout-2' })).statusCode, 403);
    ok(await owner.call('PATCH', `${base()}/flags/checkout?bypassProtection=true`, { slug: 'checkout-2' }));
    const audit = ok(await owner.call('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=checkout-2`));
    assert.equal(audit.entries[0].action, 'flag.renamed');
    assert.deepEqual(audit.entries[0].changes.protectionBypassed, { after: true });
  });

  it('refuses to delete a protected environment until an owner unprotects it', async () => {
    const refused = await owner.call('DELETE', `${base()}/environments/${prod().key}`);
    assert.equal(refused.statusCode, 409);
    assert.equal(
      refused.json().message,
      `Environment ${prod().name} of project ${project.key} is protected: an owner must unprotect it before it can be deleted`,
    );
    ok(await owner.call('PATCH', `${base()}/environments/${prod().key}`, { protected: false }));
    assert.equal((await editor.call('DELETE', `${base()}/environments/${prod().key}`)).statusCode, 204);
  });
});
