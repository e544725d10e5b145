import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { createMember, type Member } from '../support/members.ts';

// Issue 24: protected environments, change requests, scheduled changes, compare and promote, revert,
// on both engines, with the clock port (time moves only when a test moves it).

let now = Date.parse('2026-06-01T10:00:00.000Z');
const clock = () => new Date(now);

const CONTEXTS = [
  {},
  { targetingKey: 'u1', email: 'ann@example.com' },
  { targetingKey: 'u2', email: 'bob@other.org', country: 'NL' },
  { targetingKey: 'u3', email: 'cy@example.com', country: 'DE' },
  ...Array.from({ length: 12 }, (_, i) => ({ targetingKey: `user-${i}`, country: i % 2 ? 'NL' : 'FR' })),
];

/** Every flag's OFREP answer (value and variant) for each context, in one environment. */
async function answers(ctx: TestContext, project: ProjectFixture, envIndex: number): Promise<string> {
  const out: unknown[] = [];
  for (const context of CONTEXTS) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/ofrep/v1/evaluate/flags',
      headers: { 'content-type': 'application/json', ...keys(project, envIndex) },
      payload: JSON.stringify({ context }),
    });
    assert.equal(res.statusCode, 200, res.body);
    const flags = (res.json().flags as Array<{ key: string; value?: unknown; variant?: string; errorCode?: string }>)
      .map((f) => ({ key: f.key, value: f.value, variant: f.variant, errorCode: f.errorCode }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    out.push(flags);
  }
  return JSON.stringify(out);
}

async function v1(ctx: TestContext, project: ProjectFixture, envIndex: number): Promise<string> {
  const res = await ctx.app.inject({ method: 'GET', url: '/v1/flags', headers: keys(project, envIndex) });
  assert.equal(res.statusCode, 200);
  return res.body;
}

const ok = (res: { statusCode: number; body: string }, status = 200) => {
  assert.equal(res.statusCode, status, res.body);
  return JSON.parse(res.body);
};

forEachDialect(
  'change management',
  (ctx) => {
    let project: ProjectFixture;
    let owner: Member;
    let ed1: Member;
    let ed2: Member;
    let viewer: Member;
    const dev = 0;
    const prod = 2;
    const base = () => `/admin/v1/projects/${project.key}`;
    const env = (i: number) => project.environments[i]!.key;

    before(async () => {
      owner = await createMember(ctx(), 'owner@example.com', 'owner');
      ed1 = await createMember(ctx(), 'ed1@example.com', 'editor');
      ed2 = await createMember(ctx(), 'ed2@example.com', 'editor');
      viewer = await createMember(ctx(), 'viewer@example.com', 'viewer');
      project = await createProject(ctx());
      ok(
        await ctx().admin('POST', `${base()}/segments`, { key: 'staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }] }),
        201,
      );
      await createFlag(ctx(), project.key, { slug: 'checkout' });
      await createFlag(ctx(), project.key, { slug: 'banner', type: 'string', variants: { a: 'A', b: 'B', c: 'C' }, defaultVariant: 'a', enabled: true });
      // Staging gets targeting to promote; development stays as created.
      ok(
        await ctx().admin('PATCH', `${base()}/environments/${env(1)}/flags/banner`, {
          rules: [
            { segments: ['staff'], serve: { variant: 'b' } },
            {
              conditions: [{ attribute: 'country', operator: 'in', values: ['NL'] }],
              serve: {
                split: {
                  weights: [
                    { variant: 'a', weight: 50 },
                    { variant: 'c', weight: 50 },
                  ],
                },
              },
            },
          ],
          defaultVariant: 'c',
        }),
      );
      ok(await ctx().admin('PATCH', `${base()}/environments/${env(1)}/flags/checkout`, { enabled: true }));
    });

    it('lets an owner protect an environment, and an editor rename it but not protect it', async () => {
      assert.equal((await ed1.call('PATCH', `${base()}/environments/${env(prod)}`, { protected: true })).statusCode, 403);
      assert.equal((await viewer.call('PATCH', `${base()}/environments/${env(prod)}`, { name: 'prod' })).statusCode, 403);
      const renamed = ok(await ed1.call('PATCH', `${base()}/environments/${env(prod)}`, { name: 'live' }));
      assert.equal(renamed.name, 'live');
      const set = ok(await owner.call('PATCH', `${base()}/environments/${env(prod)}`, { protected: true, requiredApprovals: 2, name: 'production' }));
      assert.deepEqual([set.protected, set.requiredApprovals, set.name], [true, 2, 'production']);
      const got = ok(await ctx().admin('GET', base()));
      assert.equal(got.environments[prod].protected, true);
    });

    it('refuses direct writes to a protected environment with 409 and leaves OFREP and /v1 answers unchanged', async () => {
      const beforeOfrep = await answers(ctx(), project, prod);
      const beforeV1 = await v1(ctx(), project, prod);
      const res = await ed1.call('PATCH', `${base()}/environments/${env(prod)}/flags/checkout`, { enabled: true });
      assert.equal(res.statusCode, 409);
      assert.match(res.json().message, /protected: propose the change in a change request/);
      assert.equal((await ed1.call('PUT', `${base()}/environments/${env(prod)}/flagd`, { flags: {} })).statusCode, 409);
      assert.equal((await ed1.call('PATCH', `${base()}/segments/staff`, { match: 'any' })).statusCode, 409);
      assert.equal((await ed1.call('DELETE', `${base()}/flags/checkout`)).statusCode, 409);
      // Only owners may bypass.
      assert.equal((await ed1.call('PATCH', `${base()}/environments/${env(prod)}/flags/checkout?bypassProtection=true`, { enabled: true })).statusCode, 403);
      assert.equal(await answers(ctx(), project, prod), beforeOfrep);
      assert.equal(await v1(ctx(), project, prod), beforeV1);
    });

    it('lets an owner bypass the protection in an emergency, and records it', async () => {
      ok(await owner.call('PATCH', `${base()}/environments/${env(prod)}/flags/checkout?bypassProtection=true`, { description: 'hotfix' }));
      const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=checkout`));
      const entry = audit.entries[0];
      assert.equal(entry.environmentKey, env(prod));
      assert.deepEqual(entry.changes.protectionBypassed, { after: true });
      assert.deepEqual(entry.changes.description, { before: '', after: 'hotfix' });
    });

    it('takes a change request through review: too few approvals, no own approval, edits reset approvals, then applies', async () => {
      const created = ok(
        await ed1.call('POST', `${base()}/change-requests`, {
          environment: env(prod),
          title: 'Turn on checkout',
          description: 'Launch',
          flags: [{ slug: 'checkout', values: { enabled: true } }],
        }),
        201,
      );
      assert.equal(created.status, 'draft');
      assert.equal(created.requiredApprovals, 2);
      assert.deepEqual(
        created.changes[0].differences.map((d: { field: string }) => d.field),
        ['defaultVariant'],
      );
      const cr = `${base()}/change-requests/${created.id}`;
      assert.equal((await viewer.call('POST', `${cr}/submit`)).statusCode, 403);
      assert.equal(ok(await ed1.call('POST', `${cr}/submit`)).status, 'in_review');
      // The author cannot approve their own; the admin token is not a member.
      assert.equal((await ed1.call('POST', `${cr}/approve`, { revision: 1 })).statusCode, 403);
      assert.equal((await ctx().admin('POST', `${cr}/approve`, { revision: 1 })).statusCode, 403);
      assert.equal(ok(await ed2.call('POST', `${cr}/approve`, { revision: 1 })).status, 'in_review');
      const tooFew = await ed1.call('POST', `${cr}/apply`);
      assert.equal(tooFew.statusCode, 409);
      assert.equal(tooFew.json().message, 'The change request has 1 of the 2 approvals it needs');
      // An edit resets the approvals.
      const edited = ok(await ed1.call('PATCH', cr, { flags: [{ slug: 'checkout', values: { enabled: true, description: 'launched' } }] }));
      assert.deepEqual([edited.status, edited.approvals.length, edited.revision], ['in_review', 0, 2]);
      ok(await ed2.call('POST', `${cr}/approve`, { revision: 2 }));
      const approved = ok(await owner.call('POST', `${cr}/approve`, { revision: 2 }));
      assert.equal(approved.status, 'approved');
      ok(await ed2.call('POST', `${cr}/comments`, { body: 'Looks good' }));
      const beforeAnswers = await answers(ctx(), project, prod);
      const applied = ok(await ed1.call('POST', `${cr}/apply`));
      assert.equal(applied.status, 'applied');
      assert.equal(applied.comments[0].body, 'Looks good');
      assert.notEqual(await answers(ctx(), project, prod), beforeAnswers);
      const flag = ok(await ctx().admin('GET', `${base()}/flags`)).flags.find((f: { slug: string }) => f.slug === 'checkout').environments[prod];
      assert.deepEqual([flag.enabled, flag.description], [true, 'launched']);
      // Applied through the direct write path: a flag.updated entry with before and after, naming the request.
      const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=checkout`));
      assert.deepEqual(audit.entries[0].changes.enabled, { before: false, after: true });
      assert.deepEqual(audit.entries[0].changes.changeRequest, { after: created.id });
      assert.equal((await ed1.call('POST', `${cr}/apply`)).statusCode, 409, 'applied once only');
    });

    it('refuses a segment a segment write would refuse when it is proposed, not only when applied', async () => {
      // endsWith takes one value: PATCH .../segments/{key} answers 400, and so does the proposal, naming the field.
      const res = await ed1.call('POST', `${base()}/change-requests`, {
        environment: env(prod),
        title: 'Two domains in one condition',
        segments: [{ key: 'two-domains', values: { conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@a.example', '@b.example'] }] } }],
      });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json().details, [{ field: 'body.segments.0.values.conditions.0.values', reason: 'endsWith takes exactly one value' }]);
    });

    it('refuses to apply when a flag changed meanwhile, naming it, and changes nothing', async () => {
      const created = ok(
        await ed1.call('POST', `${base()}/change-requests`, {
          environment: env(prod),
          title: 'Two flags',
          flags: [
            { slug: 'banner', values: { defaultVariant: 'b' } },
            { slug: 'checkout', values: { description: 'two' } },
          ],
          submit: true,
        }),
        201,
      );
      const cr = `${base()}/change-requests/${created.id}`;
      ok(await ed2.call('POST', `${cr}/approve`, { revision: 1 }));
      ok(await owner.call('POST', `${cr}/approve`, { revision: 1 }));
      ok(await owner.call('PATCH', `${base()}/environments/${env(prod)}/flags/checkout?bypassProtection=true`, { description: 'meanwhile' }));
      const view = ok(await ed1.call('GET', cr));
      assert.deepEqual(
        view.changes.map((c: { key: string; conflict: boolean }) => [c.key, c.conflict]),
        [
          ['banner', false],
          ['checkout', true],
        ],
      );
      const beforeAnswers = await answers(ctx(), project, prod);
      const res = await ed1.call('POST', `${cr}/apply`);
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().message, 'Flag checkout in production was changed after this change was based on it: review the change again');
      assert.equal(await answers(ctx(), project, prod), beforeAnswers, 'banner was not changed either');
      const after = ok(await ed1.call('GET', cr));
      assert.deepEqual([after.status, after.failure], ['approved', null], 'a refused application changes nothing');
      ok(await ed1.call('POST', `${cr}/cancel`));
    });

    it('applies a scheduled change once at its time, never a cancelled one, and lists open and scheduled requests', async () => {
      const propose = async (title: string, values: Record<string, unknown>) => {
        const created = ok(
          await ed1.call('POST', `${base()}/change-requests`, { environment: env(prod), title, flags: [{ slug: 'banner', values }], submit: true }),
          201,
        );
        const cr = `${base()}/change-requests/${created.id}`;
        ok(await ed2.call('POST', `${cr}/approve`, { revision: 1 }));
        ok(await owner.call('POST', `${cr}/approve`, { revision: 1 }));
        return cr;
      };
      const first = await propose('Banner c at noon', { defaultVariant: 'c' });
      const second = await propose('Banner b at noon (cancelled)', { defaultVariant: 'b' });
      const at = new Date(now + 3_600_000).toISOString();
      assert.equal((await ed1.call('PUT', `${first}/schedule`, { at: new Date(now - 1000).toISOString() })).statusCode, 400);
      assert.equal(ok(await ed1.call('PUT', `${first}/schedule`, { at })).status, 'scheduled');
      ok(await ed1.call('PUT', `${second}/schedule`, { at }));
      const listed = ok(await viewer.call('GET', `${base()}/change-requests?status=scheduled`));
      assert.equal(listed.changeRequests.length, 2);
      ok(await ed1.call('POST', `${second}/cancel`));
      const beforeAnswers = await answers(ctx(), project, prod);
      assert.equal(await ctx().services.changeScheduler.runOnce(), 0, 'not due yet');
      now += 3_600_000;
      assert.equal(await ctx().services.changeScheduler.runOnce(), 1);
      assert.equal(await ctx().services.changeScheduler.runOnce(), 0, 'once');
      assert.notEqual(await answers(ctx(), project, prod), beforeAnswers);
      const applied = ok(await viewer.call('GET', first));
      assert.deepEqual([applied.status, applied.appliedLate, applied.appliedAt], ['applied', false, at]);
      assert.equal(ok(await viewer.call('GET', second)).status, 'cancelled');
      const flag = ok(await ctx().admin('GET', `${base()}/flags`)).flags.find((f: { slug: string }) => f.slug === 'banner').environments[prod];
      assert.equal(flag.defaultVariant, 'c', 'the cancelled one never applied');
      const open = ok(await viewer.call('GET', `${base()}/change-requests`));
      assert.ok(open.changeRequests.every((r: { status: string }) => ['draft', 'in_review', 'approved', 'scheduled'].includes(r.status)));
    });

    it('schedules a group of changes in an unprotected environment without review, and can move or unschedule it', async () => {
      const created = ok(
        await ed1.call('POST', `${base()}/change-requests`, {
          environment: env(dev),
          title: 'Dev group',
          flags: [
            { slug: 'banner', values: { defaultVariant: 'b' } },
            { slug: 'checkout', values: { enabled: true } },
          ],
        }),
        201,
      );
      const cr = `${base()}/change-requests/${created.id}`;
      ok(await ed1.call('PUT', `${cr}/schedule`, { at: new Date(now + 60_000).toISOString() }));
      const moved = ok(await ed1.call('PUT', `${cr}/schedule`, { at: new Date(now + 120_000).toISOString() }));
      assert.equal(moved.scheduledAt, new Date(now + 120_000).toISOString());
      assert.equal(ok(await ed1.call('DELETE', `${cr}/schedule`)).status, 'approved');
      ok(await ed1.call('PUT', `${cr}/schedule`, { at: new Date(now + 120_000).toISOString() }));
      now += 120_000;
      assert.equal(await ctx().services.changeScheduler.runOnce(), 1);
      const flags = ok(await ctx().admin('GET', `${base()}/flags`)).flags;
      const inDev = (slug: string) => flags.find((f: { slug: string }) => f.slug === slug).environments[dev];
      assert.deepEqual([inDev('banner').defaultVariant, inDev('checkout').enabled], ['b', true]);
    });

    it('compares environments flag by flag with every kind of difference', async () => {
      ok(await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments`, { name: 'sandbox' }), 201);
      project = ok(await ctx().admin('GET', base()));
      ok(await ctx().admin('PATCH', `${base()}/environments/${env(dev)}/flags/banner`, { payload: { size: 1 }, variants: { a: 'A', b: 'B', c: 'C', d: 'D' } }));
      const cmp = ok(await viewer.call('GET', `${base()}/compare?from=${env(1)}&to=${env(dev)}`));
      const banner = cmp.flags.find((f: { slug: string }) => f.slug === 'banner');
      assert.equal(banner.status, 'different');
      assert.deepEqual(
        banner.differences.map((d: { field: string }) => d.field),
        ['variants', 'defaultVariant', 'rules', 'payload'],
      );
      assert.deepEqual(banner.segments, { from: ['staff'], to: [] });
      const same = ok(await viewer.call('GET', `${base()}/compare?from=${env(dev)}&to=${env(dev)}`));
      assert.ok(same.flags.every((f: { status: string }) => f.status === 'identical'));
      assert.equal((await viewer.call('GET', `${base()}/compare?from=${env(dev)}&to=nope`)).statusCode, 404);
    });

    it('promotes flags so that the target evaluates like the source, in one audited transaction', async () => {
      const sandbox = 3;
      assert.notEqual(await answers(ctx(), project, sandbox), await answers(ctx(), project, 1));
      const out = ok(await ed1.call('POST', `${base()}/promote`, { from: env(1), to: env(sandbox), flags: ['banner', 'checkout'] }));
      assert.deepEqual(out, { applied: ['banner', 'checkout'], changeRequest: null });
      assert.equal(await answers(ctx(), project, sandbox), await answers(ctx(), project, 1));
      const cmp = ok(await viewer.call('GET', `${base()}/compare?from=${env(1)}&to=${env(sandbox)}`));
      assert.ok(cmp.flags.every((f: { status: string }) => f.status === 'identical'));
      const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=banner`));
      assert.deepEqual(audit.entries[0].changes.promotedFrom, { after: env(1) });
    });

    it('changes nothing when a promotion fails in the middle', async () => {
      await createFlag(ctx(), project.key, { slug: 'gate', type: 'string', variants: { x: 'X', y: 'Y' }, defaultVariant: 'x', enabled: true });
      // In development, checkout depends on gate's variant y, which production... staging's gate lacks.
      ok(await ctx().admin('PATCH', `${base()}/environments/${env(dev)}/flags/gate`, { variants: { x: 'X', y: 'Y', z: 'Z' } }));
      ok(await ctx().admin('PATCH', `${base()}/environments/${env(dev)}/flags/checkout`, { prerequisites: [{ flag: 'gate', variants: ['z'] }] }));
      const beforeAnswers = await answers(ctx(), project, 1);
      const res = await ed1.call('POST', `${base()}/promote`, { from: env(dev), to: env(1), flags: ['banner', 'checkout'] });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(await answers(ctx(), project, 1), beforeAnswers, 'banner, applied first, was rolled back');
    });

    it('promotes to a protected environment as a change request', async () => {
      const out = ok(await ed1.call('POST', `${base()}/promote`, { from: env(1), to: env(prod), flags: ['banner'] }));
      assert.deepEqual(out.applied, []);
      assert.equal(out.changeRequest.status, 'in_review');
      assert.equal(out.changeRequest.environment.key, env(prod));
      const cr = `${base()}/change-requests/${out.changeRequest.id}`;
      ok(await ed2.call('POST', `${cr}/approve`, { revision: 1 }));
      ok(await owner.call('POST', `${cr}/approve`, { revision: 1 }));
      ok(await ed2.call('POST', `${cr}/apply`));
      const cmp = ok(await viewer.call('GET', `${base()}/compare?from=${env(1)}&to=${env(prod)}`));
      assert.equal(cmp.flags.find((f: { slug: string }) => f.slug === 'banner').status, 'identical');
    });

    it('reverts one change, and everything after a point in time, to the exact previous configuration', async () => {
      const sandbox = 3;
      const url = `${base()}/environments/${env(sandbox)}/flags/banner`;
      now += 1000;
      const t0 = new Date(now).toISOString();
      const atT0 = await answers(ctx(), project, sandbox);
      now += 1000;
      ok(await ed1.call('PATCH', url, { rules: [{ conditions: [{ attribute: 'country', operator: 'in', values: ['FR'] }], serve: { variant: 'b' } }] }));
      const atT1 = await answers(ctx(), project, sandbox);
      now += 1000;
      ok(await ed1.call('PATCH', url, { defaultVariant: 'a', payload: { size: 2 } }));
      assert.notEqual(await answers(ctx(), project, sandbox), atT1);
      const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=banner`));
      const last = audit.entries[0].id;
      now += 1000;
      ok(await ed1.call('POST', `${url}/revert`, { auditId: last }));
      assert.equal(await answers(ctx(), project, sandbox), atT1, 'one change undone');
      now += 1000;
      ok(await ed1.call('POST', `${url}/revert`, { since: t0 }));
      assert.equal(await answers(ctx(), project, sandbox), atT0, 'everything since t0 undone');
      assert.equal((await ed1.call('POST', `${url}/revert`, { since: new Date(now + 1000).toISOString() })).statusCode, 409);
      assert.equal((await ed1.call('POST', `${url}/revert`, {})).statusCode, 400);
    });

    it('reverts in a protected environment as a change request', async () => {
      const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=flag&entityId=banner`));
      const prodEntry = audit.entries.find((e: { environmentKey: string; action: string }) => e.environmentKey === env(prod) && e.action === 'flag.updated');
      const out = ok(await ed1.call('POST', `${base()}/environments/${env(prod)}/flags/banner/revert`, { auditId: prodEntry.id }));
      assert.equal(out.changeRequest.status, 'in_review');
      assert.deepEqual(out.applied, []);
    });
  },
  {},
  { clock },
);
