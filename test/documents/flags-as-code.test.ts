import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestContext, forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture, sampleDoc } from '../support/fixtures.ts';
import { createMember } from '../support/members.ts';

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
    assert.deepEqual(
      again.json(),
      { projectKey: copy.key, dryRun: false, changes: [], changeRequests: [] },
      'applying the same document again changes nothing',
    );
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
      changeRequests: [],
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

  it("a protected environment gets one change request with the document's configuration; the others are applied; approved and applied, the export is the document", async () => {
    const owner = await createMember(ctx(), 'owner@example.com', 'owner');
    const ed1 = await createMember(ctx(), 'ed1@example.com', 'editor');
    const ed2 = await createMember(ctx(), 'ed2@example.com', 'editor');
    const base = `/admin/v1/projects/${project.key}`;
    const prod = project.environments[2]!.key;
    const protect = await ctx().admin('PATCH', `${base}/environments/${prod}`, { protected: true });
    assert.equal(protect.statusCode, 200, protect.body);
    const openRequests = async () => ((await ctx().admin('GET', `${base}/change-requests`)).json().changeRequests ?? []) as Doc[];
    assert.deepEqual(await openRequests(), []);
    const before = await exported(ctx(), project.key);
    const prodAnswers = await answers(ctx(), project, 2);

    // Production (protected) and development change; a new flag is on in production only; a segment changes.
    const wanted = structuredClone(before);
    wanted.flags.banner.environments.production.defaultVariant = 'green';
    wanted.flags.banner.environments.development.defaultVariant = 'green';
    wanted.flags.promo = {
      type: 'boolean',
      environments: Object.fromEntries(
        wanted.environments.map((e: string) => [e, { variants: { on: true, off: false }, defaultVariant: e === 'production' ? 'on' : 'off' }]),
      ),
    };
    wanted.segments.europe.conditions = [{ attribute: 'country', operator: 'in', values: ['DE', 'FR', 'NL'] }];
    const apply1 = (body: Doc, query = '') =>
      ed1.call('POST', `/admin/v1/documents/apply${query}`, { document: wanted, projectKey: project.key, source: 'shop.yaml', ...body });

    const proposed = [
      { action: 'update', kind: 'segment', key: 'europe', fields: ['conditions'] },
      { action: 'update', kind: 'flag', key: 'banner', environment: 'production', fields: ['defaultVariant'] },
      { action: 'update', kind: 'flag', key: 'promo', environment: 'production', fields: ['defaultVariant'] },
    ];
    const dry = await apply1({ dryRun: true });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(dry.json(), {
      projectKey: project.key,
      dryRun: true,
      changes: [
        { action: 'update', kind: 'flag', key: 'banner', environment: 'development', fields: ['defaultVariant'] },
        { action: 'create', kind: 'flag', key: 'promo' },
      ],
      changeRequests: [
        {
          environment: 'production',
          environmentKey: prod,
          title: 'Apply shop.yaml to production',
          outcome: 'opened',
          changes: proposed,
          id: null,
          path: null,
          dashboardPath: null,
        },
      ],
    });
    assert.deepEqual(await exported(ctx(), project.key), before, 'a dry run writes nothing');
    assert.deepEqual(await openRequests(), [], 'a dry run opens no change request');

    // An invalid document changes nothing and opens no change request.
    const broken = structuredClone(wanted);
    broken.flags.banner.environments.production.rules = [{ segments: ['nobody'], serve: { variant: 'red' } }];
    const refused = await ed1.call('POST', '/admin/v1/documents/apply', { document: broken, projectKey: project.key });
    assert.equal(refused.statusCode, 400, refused.body);
    assert.match(refused.json().details[0].field, /^body\.document\.flags\.banner\.environments\.production\.rules\.0/);
    assert.deepEqual(await exported(ctx(), project.key), before);
    assert.deepEqual(await openRequests(), []);

    const res = await apply1({});
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json();
    assert.deepEqual(result.changes, dry.json().changes);
    assert.equal(result.changeRequests.length, 1);
    const opened = result.changeRequests[0];
    assert.deepEqual(opened.changes, proposed);
    assert.equal(opened.outcome, 'opened');
    assert.equal(opened.path, `${base}/change-requests/${opened.id}`);
    assert.equal(opened.dashboardPath, `/projects/${project.key}/changes/${opened.id}`);

    // Development and the new flag are written; production and the segment wait for review.
    const partial = structuredClone(wanted);
    partial.flags.banner.environments.production = before.flags.banner.environments.production;
    partial.flags.promo.environments.production = { variants: { on: true, off: false }, defaultVariant: 'off' };
    partial.segments.europe = before.segments.europe;
    assert.deepEqual(await exported(ctx(), project.key), partial);
    const withoutPromo = (all: unknown[]) => (all as Doc[][]).map((flags) => flags.filter((f) => !String(f.key).startsWith('promo')));
    assert.deepEqual(withoutPromo(await answers(ctx(), project, 2)), withoutPromo(prodAnswers), 'production answers as before');

    const requests = await openRequests();
    assert.equal(requests.length, 1, 'exactly one change request');
    const cr = `${base}/change-requests/${opened.id}`;
    const view = (await ed1.call('GET', cr)).json();
    assert.equal(view.status, 'in_review');
    assert.equal(view.title, 'Apply shop.yaml to production');
    assert.match(view.author, /^ed1@example.com/);
    assert.deepEqual(
      view.changes.map((c: Doc) => [c.kind, c.key]),
      [
        ['segment', 'europe'],
        ['flag', 'banner'],
        ['flag', 'promo'],
      ],
    );
    const config = (key: string) => view.changes.find((c: Doc) => c.key === key).config;
    assert.equal(config('banner').defaultVariant, 'green');
    assert.deepEqual(config('banner').rules, before.flags.banner.environments.production.rules);
    assert.deepEqual(config('banner').prerequisites, before.flags.banner.environments.production.prerequisites);
    assert.deepEqual([config('promo').defaultVariant, config('promo').state], ['on', 'ENABLED']);
    assert.deepEqual(config('europe').conditions, wanted.segments.europe.conditions);

    const entries = (await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&limit=50`)).json().entries as Doc[];
    // This apply's entries: newest first, down to the environment's protection.
    const audit = entries.slice(
      0,
      entries.findIndex((e) => e.entity === 'environment' || e.action.startsWith('environment.')),
    );
    const applied = audit[0]!;
    assert.equal(applied.action, 'project.document_applied');
    assert.deepEqual(applied.changes.changeRequests, { after: [opened.id] });
    assert.ok(audit.some((e) => e.action === 'flag.updated' && e.entityId === 'banner' && e.environmentKey === project.environments[0]!.key));
    assert.ok(audit.some((e) => e.action === 'change_request.created' && e.entityId === opened.id));
    assert.ok(!audit.some((e) => e.action === 'flag.updated' && e.environmentKey === prod), 'nothing written in production');

    // Applied again (as CI does on every push) while the request is open: the same request, kept as it is.
    const requestState = async () => {
      const v = (await ed1.call('GET', cr)).json();
      return { status: v.status, revision: v.revision, approvals: v.approvals.length, updatedAt: v.updatedAt, changes: v.changes };
    };
    const latestAudit = async () => (await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&limit=5`)).json().entries as [Doc, Doc, ...Doc[]];
    const opening = await requestState();
    const lastBefore = (await latestAudit())[0].id;
    const keptDry = await apply1({ dryRun: true });
    assert.deepEqual(keptDry.json(), { projectKey: project.key, dryRun: true, changes: [], changeRequests: [{ ...opened, outcome: 'unchanged' }] });
    assert.equal((await latestAudit())[0].id, lastBefore, 'a dry run writes nothing');
    const kept = await apply1({});
    assert.equal(kept.statusCode, 200, kept.body);
    assert.deepEqual(kept.json(), { projectKey: project.key, dryRun: false, changes: [], changeRequests: [{ ...opened, outcome: 'unchanged' }] });
    assert.equal((await openRequests()).length, 1, 'applied twice: one change request');
    assert.deepEqual(await requestState(), opening, 'the request is as it was');
    assert.deepEqual(await exported(ctx(), project.key), partial);
    const keptAudit = await latestAudit();
    assert.equal(keptAudit[0].action, 'project.document_applied');
    assert.deepEqual(keptAudit[0].changes, { changes: { after: 0 } }, 'no request opened or updated');
    assert.equal(keptAudit[1].id, lastBefore);

    // Approved, then the document changes: the same request now proposes the new configuration, its approvals reset.
    assert.equal((await ed1.call('POST', `${cr}/approve`, { revision: 1 })).statusCode, 403, 'not by its author');
    assert.equal((await ed2.call('POST', `${cr}/approve`, { revision: 1 })).json().status, 'approved');
    wanted.flags.banner.environments.production.defaultVariant = 'blue';
    const approved = await requestState();
    assert.deepEqual([approved.status, approved.approvals], ['approved', 1]);
    const updatedDry = await apply1({ dryRun: true });
    assert.deepEqual(updatedDry.json(), { projectKey: project.key, dryRun: true, changes: [], changeRequests: [{ ...opened, outcome: 'updated' }] });
    assert.deepEqual(await requestState(), approved, 'a dry run updates nothing');
    const updated = await apply1({});
    assert.equal(updated.statusCode, 200, updated.body);
    assert.deepEqual(updated.json(), { projectKey: project.key, dryRun: false, changes: [], changeRequests: [{ ...opened, outcome: 'updated' }] });
    assert.equal((await openRequests()).length, 1, 'still one change request');
    const revised = (await ed1.call('GET', cr)).json();
    assert.deepEqual([revised.status, revised.revision, revised.approvals], ['in_review', 2, []], 'approvals reset');
    assert.equal(revised.changes.find((c: Doc) => c.key === 'banner').config.defaultVariant, 'blue');
    assert.deepEqual(
      revised.changes.map((c: Doc) => c.key),
      ['europe', 'banner', 'promo'],
    );
    assert.deepEqual(await exported(ctx(), project.key), partial, 'production still waits');
    const updateAudit = await latestAudit();
    assert.equal(updateAudit[0].action, 'project.document_applied');
    assert.deepEqual(updateAudit[0].changes, { changes: { after: 0 }, changeRequestsUpdated: { after: [opened.id] } });
    const edited = updateAudit.find((e) => e.action === 'change_request.updated')!;
    assert.equal(edited.entityId, opened.id);
    assert.deepEqual(
      [edited.changes.status, edited.changes.revision],
      [
        { before: 'approved', after: 'in_review' },
        { before: 1, after: 2 },
      ],
    );
    assert.match(edited.actor.label, /^ed1@example.com/);
    const again2 = await apply1({});
    assert.equal(again2.json().changeRequests[0].outcome, 'unchanged', 'the updated request is kept by the next apply');

    // A document that changes nothing in production leaves the open request as it is, and says so.
    const leftOpen = { ...opened, outcome: 'left_open', changes: [] };
    const revisedState = await requestState();
    for (const dryRun of [true, false]) {
      const quiet = await ed1.call('POST', '/admin/v1/documents/apply', { document: partial, projectKey: project.key, source: 'other.yaml', dryRun });
      assert.equal(quiet.statusCode, 200, quiet.body);
      assert.deepEqual(quiet.json(), { projectKey: project.key, dryRun, changes: [], changeRequests: [leftOpen] });
      assert.deepEqual(await requestState(), revisedState, 'left as it is');
    }

    // Approved by another editor and applied: the project is the document.
    assert.equal((await ed2.call('POST', `${cr}/approve`, { revision: 2 })).json().status, 'approved');
    const done = await ed1.call('POST', `${cr}/apply`);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal(done.json().status, 'applied');
    assert.deepEqual(await exported(ctx(), project.key), wanted);
    const nothing = { projectKey: project.key, dryRun: false, changes: [], changeRequests: [] };
    assert.deepEqual((await apply1({ dryRun: true })).json(), { ...nothing, dryRun: true }, 'nothing left to propose');
    const again = await apply1({});
    assert.deepEqual(again.json(), nothing, 'nothing left to apply, no request opened');
    assert.deepEqual(await openRequests(), []);

    // What a change request cannot carry is refused, as the direct write is; an owner may bypass, recorded.
    const removal = structuredClone(wanted);
    delete removal.flags.promo;
    const deleting = await ed1.call('POST', '/admin/v1/documents/apply', { document: removal, projectKey: project.key });
    assert.equal(deleting.statusCode, 409, deleting.body);
    assert.match(deleting.json().message, /^Environment production of project .* is protected/);
    const preview = structuredClone(wanted);
    preview.flags.layout.environments.production.preview = { name: 'Layout', content: null };
    const previewRes = await ed1.call('POST', '/admin/v1/documents/apply', { document: preview, projectKey: project.key });
    assert.equal(previewRes.statusCode, 409, previewRes.body);
    assert.match(previewRes.json().message, /preview settings of flag layout in production/);
    assert.deepEqual(await exported(ctx(), project.key), wanted);
    assert.equal((await ed1.call('POST', '/admin/v1/documents/apply?bypassProtection=true', { document: removal, projectKey: project.key })).statusCode, 403);
    removal.flags.banner.environments.production.defaultVariant = 'red';
    const bypassed = await owner.call('POST', '/admin/v1/documents/apply?bypassProtection=true', { document: removal, projectKey: project.key });
    assert.equal(bypassed.statusCode, 200, bypassed.body);
    assert.deepEqual(bypassed.json().changeRequests, []);
    assert.deepEqual(await exported(ctx(), project.key), removal);
    const last = (await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&limit=1`)).json().entries[0] as Doc;
    assert.deepEqual([last.action, last.changes.protectionBypassed], ['project.document_applied', { after: true }]);
    await ctx().admin('PATCH', `${base}/environments/${prod}`, { protected: false });
    document = removal;
  });

  it('finds the project by name, and refuses a name that two projects have', async () => {
    const doc = { version: 1, project: 'Twice', environments: ['main'], segments: {}, flags: {} };
    const first = await apply(ctx(), { document: doc });
    assert.equal(first.statusCode, 200, first.body);
    const second = await apply(ctx(), { document: doc });
    assert.deepEqual(second.json(), { projectKey: first.json().projectKey, dryRun: false, changes: [], changeRequests: [] });
    await createProject(ctx(), 'Twice');
    const res = await apply(ctx(), { document: doc });
    assert.equal(res.statusCode, 409, res.body);
    assert.equal(res.json().message, '2 projects are named Twice: say which one with projectKey');
    const dry = await apply(ctx(), { document: { ...doc, project: 'Brand new' }, dryRun: true });
    assert.deepEqual(dry.json(), { projectKey: null, dryRun: true, changes: [{ action: 'create', kind: 'project', key: 'Brand new' }], changeRequests: [] });
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
