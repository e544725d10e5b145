import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { createMember, type Member } from '../support/members.ts';

// Issue 33: a release's split is an ordinary split for every client. Flags as code exports an active
// release's rule and apply refuses to edit it; flagd export and sync serve it as `fractional`; single-flag
// OFREP evaluations record the exposures that its metric guardrails count, so that a regression seen
// only through OFREP evaluations and `/v1/track` conversions (no exposure sent by the client) rolls back.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = Record<string, any>;

const ok = (res: { statusCode: number; body: string }, status = 200) => {
  assert.equal(res.statusCode, status, res.body);
  return res.body === '' ? undefined : JSON.parse(res.body);
};

/** Users `from` to `to` evaluate the flag by single-flag OFREP only; the k-th of every 100 then tracks an error when k is below its variant's rate. */
async function simulate(ctx: TestContext, project: ProjectFixture, flag: string, from: number, to: number, errorRate: Record<string, number>) {
  const served: Record<string, number> = {};
  const events: unknown[] = [];
  for (let i = from; i < to; i++) {
    const targetingKey = `user-${i}`;
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/ofrep/v1/evaluate/flags/${flag}`,
      headers: { ...keys(project), 'content-type': 'application/json' },
      payload: JSON.stringify({ context: { targetingKey } }),
    });
    const { variant } = ok(res) as { variant: string };
    served[variant] = (served[variant] ?? 0) + 1;
    if (i % 100 < Math.round((errorRate[variant] ?? 0) * 100)) events.push({ kind: 'track', name: 'error', targetingKey });
  }
  for (let start = 0; start < events.length; start += 1000) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/track',
      headers: { ...keys(project), 'content-type': 'application/json' },
      payload: JSON.stringify({ events: events.slice(start, start + 1000) }),
    });
    assert.equal(res.statusCode, 202, res.body);
  }
  // The server-side exposures are buffered and written about every second: written now.
  await ctx.services.exposures.flush();
  return served;
}

forEachDialect(
  'releases seen by every client (issue 33)',
  (ctx) => {
    let project: ProjectFixture;
    let editor: Member;
    const env = () => project.environments[0]!;
    const releases = (flag: string) => `/admin/v1/projects/${project.key}/environments/${env().key}/flags/${flag}/releases`;

    before(async () => {
      await createMember(ctx(), 'owner@example.com', 'owner');
      editor = await createMember(ctx(), 'editor@example.com', 'editor');
      project = await createProject(ctx(), 'Clients');
      ok(
        await ctx().admin('POST', `/admin/v1/projects/${project.key}/metrics`, {
          key: 'error-rate',
          name: 'Error rate',
          event: 'error',
          type: 'proportion',
          direction: 'decrease',
        }),
        201,
      );
    });

    it("exports an active release's rule as code, refuses an apply that edits it, and applies the rest", async () => {
      await createFlag(ctx(), project.key, { slug: 'coded' });
      const started = ok(
        await editor.call('POST', releases('coded'), { variant: 'on', baseline: 'off', steps: [{ percent: 30, holdSeconds: 600 }, { percent: 100 }] }),
        201,
      );
      const document = ok(await ctx().admin('GET', `/admin/v1/projects/${project.key}/document`)) as Doc;
      const rules = document.flags.coded.environments[env().name].rules as Doc[];
      assert.equal(rules.length, 1);
      assert.equal(rules[0]!.id, `release-${started.id}`);
      assert.deepEqual(rules[0]!.serve.split.weights, [
        { variant: 'on', weight: 30 },
        { variant: 'off', weight: 70 },
      ]);

      // The document as exported applies (nothing of the release changes).
      ok(await ctx().admin('POST', '/admin/v1/documents/apply', { document, projectKey: project.key }));

      const edited = structuredClone(document);
      edited.flags.coded.environments[env().name].rules[0].serve.split.weights = [
        { variant: 'on', weight: 90 },
        { variant: 'off', weight: 10 },
      ];
      const refused = await ctx().admin('POST', '/admin/v1/documents/apply', { document: edited, projectKey: project.key });
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(
        refused.json().message,
        `Rule release-${started.id} of flag coded belongs to release ${started.id} while it is active: pause, roll back or cancel the release to change it`,
      );
      const removed = structuredClone(document);
      removed.flags.coded.environments[env().name].rules = [];
      assert.equal((await ctx().admin('POST', '/admin/v1/documents/apply', { document: removed, projectKey: project.key })).statusCode, 409);
      // The release still serves its share.
      assert.equal(ok(await editor.call('GET', `${releases('coded')}/${started.id}`)).percent, 30);
      // The flag's other settings stay editable as code.
      const described = structuredClone(document);
      described.flags.coded.environments[env().name].description = 'edited as code';
      ok(await ctx().admin('POST', '/admin/v1/documents/apply', { document: described, projectKey: project.key }));
      ok(await editor.call('POST', `${releases('coded')}/${started.id}/cancel`));
    });

    it('exports the release rule to flagd as a fractional split of the variant and the baseline', async () => {
      await createFlag(ctx(), project.key, { slug: 'flagd-released' });
      const started = ok(
        await editor.call('POST', releases('flagd-released'), { variant: 'on', baseline: 'off', steps: [{ percent: 25 }, { percent: 100 }] }),
        201,
      );
      const exported = ok(await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${env().key}/flagd`)) as Doc;
      const flag = exported.flags['flagd-released'];
      assert.ok(flag, JSON.stringify(Object.keys(exported.flags)));
      const text = JSON.stringify(flag.targeting);
      assert.match(text, /"fractional"/);
      assert.match(text, /\["on",25\],\["off",75\]/);
      ok(await editor.call('POST', `${releases('flagd-released')}/${started.id}/cancel`));
      const after = ok(await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${env().key}/flagd`)) as Doc;
      assert.doesNotMatch(JSON.stringify(after.flags['flagd-released'].targeting ?? {}), /fractional/);
    });

    it('counts the users of single-flag OFREP evaluations: a regression seen only through OFREP and /v1/track rolls back', async () => {
      await createFlag(ctx(), project.key, { slug: 'ofrep-only' });
      const started = ok(
        await editor.call('POST', releases('ofrep-only'), {
          variant: 'on',
          baseline: 'off',
          steps: [{ percent: 50, holdSeconds: 3600 }, { percent: 100 }],
          guardrails: [{ metric: 'error-rate', minUsers: 200 }],
        }),
        201,
      );
      const served = await simulate(ctx(), project, 'ofrep-only', 0, 2400, { off: 0.05, on: 0.3 });
      assert.ok(served.on! > 900 && served.off! > 900, JSON.stringify(served));
      assert.equal(await ctx().services.releaseGuard.runOnce(), 1);
      const view = ok(await editor.call('GET', `${releases('ofrep-only')}/${started.id}`));
      assert.equal(view.status, 'rolled_back');
      // Every user the server served was counted, none sent an exposure.
      assert.equal(view.guardrails[0].users.on, served.on);
      assert.equal(view.guardrails[0].users.off, served.off);
      assert.match(view.rolledBackReason, /^error-rate rose from [45]\.\d % to (29|30|31)\.\d %/);
      // After the rollback the flag's evaluations record nothing more for it.
      const before = ok(await editor.call('GET', `${releases('ofrep-only')}/${started.id}`)).guardrails[0].users;
      await simulate(ctx(), project, 'ofrep-only', 5000, 5010, {});
      assert.deepEqual(ok(await editor.call('GET', `${releases('ofrep-only')}/${started.id}`)).guardrails[0].users, before);
    });
  },
  { FLAGPOST_RELEASE_CHECK_MS: '0' },
);
