import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ADMIN_TOKEN, createTestDatabase, forEachDialect, startInstance } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { createMember, type Member } from '../support/members.ts';

// Issue 33: starting a release in a protected environment goes through a change request (the plan is
// what is approved, then its steps run by themselves); a paused step's hold does not count paused time.
// The clock is a port the tests move; the guard's rounds are run by the tests.

let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

const ok = (res: { statusCode: number; body: string }, status = 200) => {
  assert.equal(res.statusCode, status, res.body);
  return res.body === '' ? undefined : JSON.parse(res.body);
};

forEachDialect(
  'releases through change requests and paused holds (issue 33)',
  (ctx) => {
    let project: ProjectFixture;
    let owner: Member;
    let author: Member;
    let reviewer: Member;
    const base = () => `/admin/v1/projects/${project.key}`;
    const prod = () => project.environments[1]!.key;
    const dev = () => project.environments[0]!.key;
    const releases = (env: string, flag: string) => `${base()}/environments/${env}/flags/${flag}/releases`;
    const guard = () => ctx().services.releaseGuard.runOnce();
    const evaluate = async (env: string, flag: string, targetingKey: string) => {
      const res = await ctx().app.inject({
        method: 'POST',
        url: `/ofrep/v1/evaluate/flags/${flag}`,
        headers: {
          ...keys(
            project,
            project.environments.findIndex((e) => e.key === env),
          ),
          'content-type': 'application/json',
        },
        payload: JSON.stringify({ context: { targetingKey } }),
      });
      return ok(res) as { variant: string; reason: string; metadata?: { releaseId?: string } };
    };

    before(async () => {
      owner = await createMember(ctx(), 'owner@example.com', 'owner');
      author = await createMember(ctx(), 'author@example.com', 'editor');
      reviewer = await createMember(ctx(), 'reviewer@example.com', 'editor');
      project = await createProject(ctx(), 'Guarded');
      assert.ok(project.environments.length >= 2, 'a project has a second environment to protect');
      ok(await owner.call('PATCH', `${base()}/environments/${prod()}`, { protected: true, requiredApprovals: 1 }));
      ok(
        await owner.call('POST', `${base()}/release-templates`, {
          key: 'two-steps',
          name: 'Two steps',
          steps: [{ percent: 20, holdSeconds: 600 }, { percent: 100 }],
        }),
        201,
      );
    });

    it('proposes a release in a protected environment as a change request: the author cannot approve it, another editor does, applying starts it', async () => {
      await createFlag(ctx(), project.key, { slug: 'checkout' });
      const plan = { variant: 'on', baseline: 'off', template: 'two-steps' };
      // Straight to the environment: refused, as any direct write there.
      const direct = await author.call('POST', releases(prod(), 'checkout'), plan);
      assert.equal(direct.statusCode, 409, direct.body);
      assert.match(direct.json().message, /protected: propose the change in a change request/);

      // A plan that cannot run is refused when proposed, naming where.
      const bad = await author.call('POST', `${base()}/change-requests`, {
        environment: prod(),
        title: 'Bad plan',
        releases: [{ slug: 'checkout', plan: { variant: 'on', baseline: 'on', steps: [{ percent: 100 }] } }],
      });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.match(bad.body, /body\.releases\.0\.plan\.baseline/);

      const created = ok(
        await author.call('POST', `${base()}/change-requests`, {
          environment: prod(),
          title: 'Release the new checkout',
          releases: [{ slug: 'checkout', plan }],
          submit: true,
        }),
        201,
      );
      assert.equal(created.status, 'in_review');
      // What is approved is the plan with its template's parts filled in.
      assert.equal(created.changes.length, 1);
      assert.deepEqual([created.changes[0].kind, created.changes[0].key, created.changes[0].conflict], ['release', 'checkout', false]);
      assert.deepEqual(created.changes[0].config, {
        variant: 'on',
        baseline: 'off',
        steps: [{ percent: 20, holdSeconds: 600 }, { percent: 100 }],
        guardrails: [],
        template: 'two-steps',
      });
      // Nothing runs before it is applied.
      assert.equal(ok(await author.call('GET', releases(prod(), 'checkout'))).releases.length, 0);
      const cr = `${base()}/change-requests/${created.id}`;
      assert.equal((await author.call('POST', `${cr}/approve`, { revision: 1 })).statusCode, 403, 'the author cannot approve their own');
      assert.equal((await author.call('POST', `${cr}/apply`)).statusCode, 409, 'not approved yet');
      assert.equal(ok(await reviewer.call('POST', `${cr}/approve`, { revision: 1 })).status, 'approved');
      const applied = ok(await author.call('POST', `${cr}/apply`));
      assert.equal(applied.status, 'applied');

      const [release] = ok(await author.call('GET', releases(prod(), 'checkout'))).releases;
      assert.deepEqual([release.status, release.percent, release.template], ['running', 20, 'two-steps']);
      assert.match(release.createdBy, /^author@example\.com/);
      const answer = await evaluate(prod(), 'checkout', 'user-1');
      assert.deepEqual([answer.reason, answer.metadata?.releaseId], ['SPLIT', release.id]);
      const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=release&entityId=${release.id}`));
      const started = audit.entries.find((e: { action: string }) => e.action === 'release.started');
      assert.deepEqual(started.changes.changeRequest, { after: created.id });

      // Then its steps run by themselves, in the protected environment.
      offsetMs += 601_000;
      assert.equal(await guard(), 1);
      assert.equal(ok(await author.call('GET', `${releases(prod(), 'checkout')}/${release.id}`)).percent, 100);
      assert.equal(await guard(), 1);
      assert.equal(ok(await author.call('GET', `${releases(prod(), 'checkout')}/${release.id}`)).status, 'completed');
      assert.equal((await evaluate(prod(), 'checkout', 'user-1')).variant, 'on');
    });

    it('refuses to apply a release request while the flag has an active release, and applies nothing of it', async () => {
      await createFlag(ctx(), project.key, { slug: 'search' });
      const plan = { variant: 'on', baseline: 'off', steps: [{ percent: 10, holdSeconds: 60 }, { percent: 100 }] };
      const first = ok(
        await author.call('POST', `${base()}/change-requests`, { environment: prod(), title: 'One', releases: [{ slug: 'search', plan }], submit: true }),
        201,
      );
      const second = ok(
        await author.call('POST', `${base()}/change-requests`, { environment: prod(), title: 'Two', releases: [{ slug: 'search', plan }], submit: true }),
        201,
      );
      for (const id of [first.id, second.id]) ok(await reviewer.call('POST', `${base()}/change-requests/${id}/approve`, { revision: 1 }));
      ok(await reviewer.call('POST', `${base()}/change-requests/${first.id}/apply`));
      const refused = await reviewer.call('POST', `${base()}/change-requests/${second.id}/apply`);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.match(refused.json().message, /already has an active release/);
      assert.equal(ok(await author.call('GET', `${base()}/change-requests/${second.id}`)).status, 'approved');
      assert.equal(ok(await author.call('GET', releases(prod(), 'search'))).releases.length, 1);
    });

    it("does not count a paused step's paused time in its hold, the count kept in the stored release", async () => {
      await createFlag(ctx(), project.key, { slug: 'banner' });
      const started = ok(
        await author.call('POST', releases(dev(), 'banner'), { variant: 'on', baseline: 'off', steps: [{ percent: 30, holdSeconds: 600 }, { percent: 100 }] }),
        201,
      );
      const url = `${releases(dev(), 'banner')}/${started.id}`;
      const holdEnd = Date.parse(started.steps[0].holdEndsAt);
      offsetMs += 200_000;
      ok(await author.call('POST', `${url}/pause`));
      // Paused for 900 s: more than the whole hold.
      offsetMs += 900_000;
      // (Other suites' releases may move on these rounds: this one is read back.)
      await guard();
      const paused = ok(await author.call('GET', url));
      assert.deepEqual([paused.status, paused.currentStep, paused.percent], ['paused', 0, 30], 'a paused release does not move');
      // While paused, the hold's end moves on with the clock.
      assert.ok(Date.parse(paused.steps[0].holdEndsAt) >= holdEnd + 900_000, JSON.stringify(paused.steps[0]));
      const resumed = ok(await author.call('POST', `${url}/resume`));
      assert.equal(resumed.status, 'running');
      const end = Date.parse(resumed.steps[0].holdEndsAt);
      assert.ok(Math.abs(end - (holdEnd + 1_100_000 - 200_000)) < 5_000, `hold ends ${resumed.steps[0].holdEndsAt}`);
      // 200 s ran before the pause: 400 s are left, whatever the guard's rounds (the stored progress counts, not the process).
      await guard();
      assert.deepEqual([ok(await author.call('GET', url)).waitingFor, ok(await author.call('GET', url)).percent], ['time', 30]);
      offsetMs += 390_000;
      await guard();
      assert.equal(ok(await author.call('GET', url)).percent, 30, 'ten seconds of the hold are left');
      offsetMs += 15_000;
      await guard();
      assert.equal(ok(await author.call('GET', url)).percent, 100);
    });
  },
  { FLAGPOST_RELEASE_CHECK_MS: '0' },
  { clock },
);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(
    `a paused hold across a restart [${dialect}]`,
    { skip: dialect === 'postgres' && !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' },
    () => {
      it('keeps the hold stopped while paused and counts the rest after the resume, in a new process on the same database', { timeout: 120_000 }, async () => {
        let now = Date.parse('2026-07-01T08:00:00.000Z');
        const fixed = () => new Date(now);
        const database = await createTestDatabase(dialect);
        const env = { FLAGPOST_RELEASE_CHECK_MS: '0' };
        const stop = async (i: Awaited<ReturnType<typeof startInstance>>) => {
          await i.app.close();
          await i.services.stop();
          await i.handle.close();
        };
        const call = (i: Awaited<ReturnType<typeof startInstance>>, method: 'GET' | 'POST', url: string, body?: unknown) =>
          i.app.inject({
            method,
            url,
            headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            payload: body === undefined ? undefined : JSON.stringify(body),
          });
        let instance = await startInstance(database, env, { clock: fixed });
        try {
          const project = ok(await call(instance, 'POST', '/admin/v1/projects', { name: 'Restarts' }), 201) as ProjectFixture;
          ok(await call(instance, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'held' }), 201);
          const url = `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/held/releases`;
          const started = ok(
            await call(instance, 'POST', url, { variant: 'on', baseline: 'off', steps: [{ percent: 10, holdSeconds: 600 }, { percent: 100 }] }),
            201,
          );
          now += 100_000;
          ok(await call(instance, 'POST', `${url}/${started.id}/pause`));
          await stop(instance);
          // Down for an hour while paused; a new process resumes it.
          now += 3_600_000;
          instance = await startInstance(database, env, { clock: fixed });
          await instance.services.releaseGuard.runOnce();
          assert.equal(ok(await call(instance, 'GET', `${url}/${started.id}`)).percent, 10, 'a paused release does not move');
          const resumed = ok(await call(instance, 'POST', `${url}/${started.id}/resume`));
          assert.equal(resumed.steps[0].holdEndsAt, new Date(now + 500_000).toISOString());
          await stop(instance);
          now += 499_000;
          instance = await startInstance(database, env, { clock: fixed });
          await instance.services.releaseGuard.runOnce();
          assert.equal(ok(await call(instance, 'GET', `${url}/${started.id}`)).percent, 10, 'one second of the hold is left');
          now += 2_000;
          assert.equal(await instance.services.releaseGuard.runOnce(), 1);
          assert.equal(ok(await call(instance, 'GET', `${url}/${started.id}`)).percent, 100);
        } finally {
          await stop(instance);
          await database.drop();
        }
      });
    },
  );
}
