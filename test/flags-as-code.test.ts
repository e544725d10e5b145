import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestContext, forEachDialect, type TestContext } from './support/context.ts';
import { createFlag, createProject, type ProjectFixture, sampleDoc } from './support/fixtures.ts';

// Issue 21, flags as code, through the admin API on the real app and database: a project exported as one
// document, applied to an empty instance (the round trip gives the same document and the same OFREP
// answers), dry runs that change nothing, applies that change exactly what differs, and refusals that
// change nothing.

type Doc = Record<string, any>;

const CONTEXTS: Array<Record<string, unknown>> = [
  {},
  { targetingKey: 'user-1' },
  { targetingKey: 'user-2', country: 'DE' },
  { targetingKey: 'user-3', country: 'FR', email: 'ada@example.com' },
  { targetingKey: 'user-4', email: 'bob@flagpost.dev', plan: 'pro' },
  ...Array.from({ length: 30 }, (_, i) => ({ targetingKey: `u${i}`, country: i % 2 ? 'DE' : 'US', plan: i % 3 ? 'free' : 'pro' })),
];

async function seed(ctx: TestContext): Promise<ProjectFixture> {
  const project = await createProject(ctx, 'Code shop');
  const base = `/admin/v1/projects/${project.key}`;
  const ok = async (method: 'POST' | 'PATCH', url: string, body: unknown) => {
    const res = await ctx.admin(method, url, body);
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`);
  };
  await ok('POST', `${base}/segments`, { key: 'staff', name: 'Staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@flagpost.dev'] }] });
  await ok('POST', `${base}/segments`, {
    key: 'europe',
    name: 'Europe',
    description: 'EU countries',
    match: 'any',
    conditions: [{ attribute: 'country', operator: 'in', values: ['DE', 'FR'] }],
  });
  await createFlag(ctx, project.key, { slug: 'checkout', description: 'New checkout', payload: { theme: 'dark' } });
  await createFlag(ctx, project.key, { slug: 'banner', type: 'string', variants: { red: 'r', green: 'g', blue: 'b' }, enabled: true });
  await createFlag(ctx, project.key, { slug: 'beta', enabled: true, isPreview: true, previewName: 'Beta', previewContent: sampleDoc });
  const prod = project.environments[2]!.key;
  await ok('PATCH', `${base}/environments/${prod}/flags/checkout`, {
    rules: [
      { name: 'staff first', segments: ['staff'], serve: { variant: 'on' } },
      {
        name: 'europe rollout',
        segments: ['europe'],
        serve: {
          split: {
            weights: [
              { variant: 'on', weight: 25 },
              { variant: 'off', weight: 75 },
            ],
          },
        },
      },
    ],
  });
  await ok('PATCH', `${base}/environments/${prod}/flags/banner`, {
    rules: [{ conditions: [{ attribute: 'plan', operator: 'equals', values: ['pro'] }], serve: { variant: 'blue' } }],
    prerequisites: [{ flag: 'checkout', variants: ['on'] }],
  });
  return project;
}

async function exported(ctx: TestContext, projectKey: string): Promise<Doc> {
  const res = await ctx.admin('GET', `/admin/v1/projects/${projectKey}/document`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

async function apply(ctx: TestContext, body: Record<string, unknown>) {
  return ctx.admin('POST', '/admin/v1/documents/apply', body);
}

async function answers(ctx: TestContext, project: ProjectFixture, envIndex: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const context of CONTEXTS) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags',
      headers: { 'x-project-key': project.key, 'x-environment-key': project.environments[envIndex]!.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ context }),
    });
    assert.equal(res.statusCode, 200, res.body);
    // The bulk lists flags newest first; a copy made in one transaction has other creation times.
    out.push((res.json().flags as Array<{ key: string }>).sort((a, b) => (a.key < b.key ? -1 : 1)));
  }
  return out;
}

forEachDialect('flags as code', (ctx) => {
  let project: ProjectFixture;
  let document: Doc;
  let other: TestContext;

  before(async () => {
    project = await seed(ctx());
    other = await createTestContext(ctx().dialect);
  });
  after(async () => {
    await other?.close();
  });

  it('exports the project as one document, identical on re-export, without keys', async () => {
    document = await exported(ctx(), project.key);
    assert.equal(document.version, 1);
    assert.equal(document.project, 'Code shop');
    assert.deepEqual(document.environments, ['development', 'staging', 'production']);
    assert.deepEqual(Object.keys(document.segments), ['europe', 'staff']);
    assert.deepEqual(Object.keys(document.flags), ['banner', 'beta', 'checkout']);
    assert.equal(document.flags.checkout.environments.production.rules.length, 2);
    assert.equal(document.flags.checkout.environments.production.rules[1].serve.split.bucketing, 'flagd-fractional-v2');
    assert.deepEqual(document.flags.banner.environments.production.prerequisites, [{ flag: 'checkout', variants: ['on'] }]);
    assert.equal(document.flags.beta.environments.development.preview.name, 'Beta');
    assert.equal(document.flags.checkout.environments.development.description, 'New checkout');
    const text = JSON.stringify(document);
    assert.ok(!text.includes(project.key), 'the project key is not in the document');
    for (const env of project.environments) assert.ok(!text.includes(env.key), 'no environment key in the document');
    assert.equal(JSON.stringify(await exported(ctx(), project.key)), text);
  });

  it('round trip: applied to an empty instance, the export is the same document and OFREP answers the same', async () => {
    const res = await apply(other, { document });
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json();
    assert.equal(result.dryRun, false);
    assert.deepEqual(result.changes[0], { action: 'create', kind: 'project', key: 'Code shop' });
    const copy = (await other.admin('GET', `/admin/v1/projects/${result.projectKey}`)).json() as ProjectFixture;
    assert.deepEqual(await exported(other, copy.key), document);
    for (let i = 0; i < 3; i++) assert.deepEqual(await answers(other, copy, i), await answers(ctx(), project, i), `environment ${i}`);
    const again = await apply(other, { document });
    assert.deepEqual(again.json(), { projectKey: copy.key, dryRun: false, changes: [] }, 'applying the same document again changes nothing');
  });

  it('a dry run lists every difference and changes nothing; apply then writes exactly those, audited', async () => {
    const wanted = structuredClone(document);
    wanted.flags.checkout.environments.production.rules[1].serve.split.weights = [
      { variant: 'on', weight: 50 },
      { variant: 'off', weight: 50 },
    ];
    delete wanted.flags.beta;
    wanted.flags.layout = {
      type: 'string',
      environments: Object.fromEntries(wanted.environments.map((e: string) => [e, { variants: { grid: 'grid', list: 'list' }, defaultVariant: 'grid' }])),
    };
    wanted.segments.mobile = { name: 'Mobile', match: 'all', conditions: [{ attribute: 'device', operator: 'equals', values: ['mobile'] }] };
    wanted.segments.europe.description = 'Europe';
    wanted.environments.push('qa');
    for (const flag of Object.values(wanted.flags) as Doc[]) flag.environments.qa = structuredClone(flag.environments.development);

    const before = await exported(ctx(), project.key);
    const dry = await apply(ctx(), { document: wanted, projectKey: project.key, dryRun: true });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(dry.json(), {
      projectKey: project.key,
      dryRun: true,
      changes: [
        { action: 'create', kind: 'environment', key: 'qa' },
        { action: 'update', kind: 'segment', key: 'europe', fields: ['description'] },
        { action: 'create', kind: 'segment', key: 'mobile' },
        { action: 'update', kind: 'flag', key: 'checkout', environment: 'production', fields: ['rules'] },
        { action: 'create', kind: 'flag', key: 'layout' },
        { action: 'delete', kind: 'flag', key: 'beta' },
      ],
    });
    assert.deepEqual(await exported(ctx(), project.key), before, 'a dry run changes nothing');

    const res = await apply(ctx(), { document: wanted, projectKey: project.key });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().changes, dry.json().changes);
    assert.deepEqual(await exported(ctx(), project.key), wanted);
    const audit = (await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&limit=100`)).json().entries as Doc[];
    const actions = audit.map((e) => `${e.action} ${e.entityId}`);
    for (const expected of [
      'project.document_applied',
      'flag.deleted beta',
      'flag.created layout',
      'flag.updated checkout',
      'segment.created mobile',
      'segment.updated europe',
    ]) {
      assert.ok(
        actions.some((a) => a.startsWith(expected)),
        `audit has ${expected}: ${actions.join(', ')}`,
      );
    }
    document = wanted;
  });

  it('a document that breaks targeting is a 400 naming the path, and nothing changes', async () => {
    const before = await exported(ctx(), project.key);
    const broken = structuredClone(before);
    broken.flags.checkout.environments.production.rules[0].segments = ['nobody'];
    delete broken.flags.layout;
    const res = await apply(ctx(), { document: broken, projectKey: project.key });
    assert.equal(res.statusCode, 400, res.body);
    assert.match(res.json().details[0].field, /^body\.document\.flags\.checkout\.environments\.production\.rules\.0/);
    assert.deepEqual(await exported(ctx(), project.key), before);

    const retyped = structuredClone(before);
    retyped.flags.layout.type = 'number';
    for (const e of Object.values(retyped.flags.layout.environments) as Doc[]) e.variants = { one: 1 };
    for (const e of Object.values(retyped.flags.layout.environments) as Doc[]) e.defaultVariant = 'one';
    const conflict = await apply(ctx(), { document: retyped, projectKey: project.key });
    assert.equal(conflict.statusCode, 409, conflict.body);
    assert.match(conflict.json().message, /^Flag layout is a string flag; the document makes it a number flag/);

    const missingEnv = structuredClone(before);
    delete missingEnv.flags.layout.environments.qa;
    const shape = await apply(ctx(), { document: missingEnv, projectKey: project.key });
    assert.equal(shape.statusCode, 400, shape.body);
    assert.equal(shape.json().details[0].field, 'body.document.flags.layout.environments');
    assert.deepEqual(await exported(ctx(), project.key), before);
  });

  it('a segment a rule still uses cannot be removed by a document that keeps the rule', async () => {
    const before = await exported(ctx(), project.key);
    const doc = structuredClone(before);
    delete doc.segments.staff;
    const res = await apply(ctx(), { document: doc, projectKey: project.key });
    assert.equal(res.statusCode, 400, res.body);
    assert.deepEqual(await exported(ctx(), project.key), before);
  });

  it('finds the project by name, and refuses a name that two projects have', async () => {
    const doc = { version: 1, project: 'Twice', environments: ['main'], segments: {}, flags: {} };
    const first = await apply(ctx(), { document: doc });
    assert.equal(first.statusCode, 200, first.body);
    const second = await apply(ctx(), { document: doc });
    assert.deepEqual(second.json(), { projectKey: first.json().projectKey, dryRun: false, changes: [] });
    await createProject(ctx(), 'Twice');
    const res = await apply(ctx(), { document: doc });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().message, '2 projects are named Twice: say which one with projectKey');
    const dry = await apply(ctx(), { document: { ...doc, project: 'Brand new' }, dryRun: true });
    assert.deepEqual(dry.json(), { projectKey: null, dryRun: true, changes: [{ action: 'create', kind: 'project', key: 'Brand new' }] });
    const list = (await ctx().admin('GET', '/admin/v1/projects')).json().projects as Doc[];
    assert.ok(!list.some((p) => p.name === 'Brand new'), 'a dry run creates no project');
  });

  it('takes rules without ids and defaults, and applying them twice changes nothing', async () => {
    const doc = {
      version: 1,
      project: 'Handwritten',
      environments: ['prod'],
      segments: {},
      flags: {
        dark: {
          type: 'boolean',
          environments: {
            prod: {
              variants: { on: true, off: false },
              defaultVariant: 'off',
              rules: [{ conditions: [{ attribute: 'plan', operator: 'equals', values: ['pro'] }], serve: { variant: 'on' } }],
            },
          },
        },
      },
    };
    const first = await apply(ctx(), { document: doc });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual((await apply(ctx(), { document: doc })).json().changes, []);
    const out = await exported(ctx(), first.json().projectKey);
    assert.deepEqual(out.flags.dark.environments.prod.rules, [
      {
        id: 'rule-1',
        name: '',
        enabled: true,
        conditions: [{ attribute: 'plan', operator: 'equals', values: ['pro'] }],
        segments: [],
        serve: { variant: 'on' },
      },
    ]);
  });
});

describe('flags as code: who may', () => {
  it('needs a credential', async () => {
    const ctx = await createTestContext('sqlite');
    try {
      const res = await ctx.app.inject({ method: 'POST', url: '/admin/v1/documents/apply', payload: { document: {} } });
      assert.equal(res.statusCode, 401);
    } finally {
      await ctx.close();
    }
  });
});
