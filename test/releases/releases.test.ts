import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, createTestDatabase, forEachDialect, startInstance, type TestContext } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';
import { startSmtpServer, startWebhookReceiver } from '../support/forms.ts';
import { createMember, type Member } from '../support/members.ts';

// Issue 33, done when: a regression rolls back by itself exactly once with its audit entry, webhook and
// e-mail; an A/A release runs to completion; an approval step waits; a Prometheus guardrail rolls back on
// a breach and holds on an outage; two instances on PostgreSQL apply each step once. Real app, real
// loopback receivers; the clock is a port the tests move, and the guard's rounds are run by the tests.

let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

const smtp = await startSmtpServer();
after(() => smtp.close());

const ok = (res: { statusCode: number; body: string }, status = 200) => {
  assert.equal(res.statusCode, status, res.body);
  return res.body === '' ? undefined : JSON.parse(res.body);
};

/** Users `from` to `to` evaluate the flag by single-flag OFREP, then send their exposure and, at the rate of their variant, an error. */
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
    events.push({ kind: 'exposure', flagKey: flag, variant, targetingKey });
    // Deterministic: the k-th user of every 100 errs when k is below the rate's percentage.
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
  return served;
}

forEachDialect(
  'releases (issue 33)',
  (ctx) => {
    let project: ProjectFixture;
    let editor: Member;
    const env = () => project.environments[0]!.key;
    const releases = (flag: string) => `/admin/v1/projects/${project.key}/environments/${env()}/flags/${flag}/releases`;
    const guard = () => ctx().services.releaseGuard.runOnce();

    before(async () => {
      await createMember(ctx(), 'owner@example.com', 'owner');
      editor = await createMember(ctx(), 'editor@example.com', 'editor');
      project = await createProject(ctx(), 'Releases');
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

    it('rolls a regression back by itself, once, with the audit entry, the webhook and the e-mail to its creator', async () => {
      const receiver = await startWebhookReceiver();
      // The SMTP server is shared by both engines' suites.
      const mailsBefore = smtp.messages.length;
      try {
        ok(await ctx().admin('POST', `/admin/v1/projects/${project.key}/webhooks`, { url: receiver.url }), 201);
        await createFlag(ctx(), project.key, { slug: 'checkout' });
        const started = ok(
          await editor.call('POST', releases('checkout'), {
            variant: 'on',
            baseline: 'off',
            steps: [{ percent: 50, holdSeconds: 3600 }, { percent: 100 }],
            guardrails: [{ metric: 'error-rate', minUsers: 200 }],
          }),
          201,
        );
        assert.deepEqual([started.status, started.percent, started.currentStep], ['running', 50, 0]);
        assert.match(started.createdBy, /^editor@example\.com/);
        assert.equal(started.guardrails[0].state, 'collecting');
        // A second active release of the flag and environment is refused.
        assert.equal((await editor.call('POST', releases('checkout'), { variant: 'on', baseline: 'off', steps: [{ percent: 100 }] })).statusCode, 409);
        // The release's rule is not for hands, the rest of the targeting is.
        const flagUrl = `/admin/v1/projects/${project.key}/environments/${env()}/flags/checkout`;
        const refused = await editor.call('PATCH', flagUrl, { rules: [] });
        assert.equal(refused.statusCode, 409, refused.body);
        assert.match(refused.json().message, new RegExp(`belongs to release ${started.id}`));
        ok(await editor.call('PATCH', flagUrl, { description: 'still editable' }));

        // Few users: collecting, nothing moves.
        await simulate(ctx(), project, 'checkout', 0, 100, { off: 0.05, on: 0.3 });
        assert.equal(await guard(), 0);
        assert.equal(ok(await editor.call('GET', `${releases('checkout')}/${started.id}`)).status, 'running');

        const served = await simulate(ctx(), project, 'checkout', 100, 2400, { off: 0.05, on: 0.3 });
        assert.ok(served.on! > 900 && served.off! > 900, JSON.stringify(served));
        // OFREP names the release on its split's answers.
        const answer = ok(
          await ctx().app.inject({
            method: 'POST',
            url: '/ofrep/v1/evaluate/flags/checkout',
            headers: { ...keys(project), 'content-type': 'application/json' },
            payload: JSON.stringify({ context: { targetingKey: 'user-1' } }),
          }),
        );
        assert.equal(answer.reason, 'SPLIT');
        assert.equal(answer.metadata.releaseId, started.id);

        const [a, b] = await Promise.all([guard(), guard()]);
        assert.equal(a + b, 1, 'one rollback');
        assert.equal(await guard(), 0);
        const view = ok(await editor.call('GET', `${releases('checkout')}/${started.id}`));
        assert.equal(view.status, 'rolled_back');
        assert.match(view.rolledBackReason, /^error-rate rose from 5\.\d % to 30\.\d %, \+\d+ % \(\+\d+ % to \+\d+ %\)$/);
        assert.equal(view.guardrails[0].state, 'breached');
        assert.equal(view.percent, 0);
        // Everyone is on the baseline, by the default serve, without the release's rule.
        // A write of another field answers the flag as it is now.
        const flag = ok(await editor.call('PATCH', flagUrl, { description: 'after the rollback' }));
        assert.equal(flag.defaultVariant, 'off');
        assert.equal(flag.rules.length, 0);
        const after = ok(
          await ctx().app.inject({
            method: 'POST',
            url: '/ofrep/v1/evaluate/flags/checkout',
            headers: { ...keys(project), 'content-type': 'application/json' },
            payload: JSON.stringify({ context: { targetingKey: 'user-1' } }),
          }),
        );
        assert.equal(after.variant, 'off');

        const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=release&entityId=${started.id}`));
        const rollbacks = audit.entries.filter((e: { action: string }) => e.action === 'release.rolled_back');
        assert.equal(rollbacks.length, 1);
        assert.deepEqual(rollbacks[0].actor, { type: 'system', id: null, label: 'release guard' });

        await ctx().services.webhookWorker.runOnce();
        const types = receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);
        assert.equal(types.filter((t) => t === 'release.rolled_back').length, 1);
        assert.equal(types.filter((t) => t === 'release.started').length, 1);

        const mails = smtp.messages.slice(mailsBefore).filter((m) => m.to.includes('editor@example.com') && /Rolled back: checkout/.test(m.raw));
        assert.equal(mails.length, 1);
        assert.match(mails[0]!.raw.replace(/=\r\n/g, ''), /error-rate rose from 5/);
      } finally {
        await receiver.close();
      }
    });

    it('runs an A/A release through every step to completion, the flag then reading as set by hand', async () => {
      await createFlag(ctx(), project.key, { slug: 'banner' });
      const started = ok(
        await editor.call('POST', releases('banner'), {
          variant: 'on',
          baseline: 'off',
          steps: [{ percent: 50, holdSeconds: 600 }, { percent: 100 }],
          guardrails: [{ metric: 'error-rate', minUsers: 200 }],
        }),
        201,
      );
      await simulate(ctx(), project, 'banner', 0, 2400, { off: 0.05, on: 0.05 });
      assert.equal(await guard(), 0, 'the hold has not passed');
      const held = ok(await editor.call('GET', `${releases('banner')}/${started.id}`));
      assert.deepEqual([held.status, held.waitingFor, held.guardrails[0].state], ['running', 'time', 'healthy']);
      offsetMs += 601_000;
      assert.equal(await guard(), 1);
      assert.equal(ok(await editor.call('GET', `${releases('banner')}/${started.id}`)).percent, 100);
      assert.equal(await guard(), 1);
      const done = ok(await editor.call('GET', `${releases('banner')}/${started.id}`));
      assert.equal(done.status, 'completed');
      assert.ok(done.steps.every((s: { startedAt: string | null; completedAt: string | null }) => s.startedAt && s.completedAt));
      const flag = ok(await editor.call('PATCH', `/admin/v1/projects/${project.key}/environments/${env()}/flags/banner`, { description: 'released' }));
      assert.deepEqual([flag.defaultVariant, flag.rules.length], ['on', 0]);
      const history = ok(await editor.call('GET', releases('banner')));
      assert.deepEqual(
        history.releases.map((r: { id: string }) => r.id),
        [started.id],
      );
    });

    it('waits at an approval step until someone approves it', async () => {
      await createFlag(ctx(), project.key, { slug: 'search' });
      const started = ok(
        await editor.call('POST', releases('search'), {
          variant: 'on',
          baseline: 'off',
          steps: [{ percent: 10 }, { percent: 50, approval: true }, { percent: 100 }],
        }),
        201,
      );
      assert.equal(await guard(), 1);
      assert.equal(await guard(), 0);
      const waiting = ok(await editor.call('GET', `${releases('search')}/${started.id}`));
      assert.deepEqual([waiting.status, waiting.currentStep, waiting.percent, waiting.waitingFor], ['waiting_approval', 1, 10, 'approval']);
      const approved = ok(await ctx().admin('POST', `${releases('search')}/${started.id}/approve`));
      assert.deepEqual([approved.status, approved.percent, approved.steps[1].approvedBy], ['running', 50, 'admin token']);
      assert.equal((await ctx().admin('POST', `${releases('search')}/${started.id}/approve`)).statusCode, 409);
      assert.equal(await guard(), 1);
      assert.equal(ok(await editor.call('GET', `${releases('search')}/${started.id}`)).percent, 100);
      assert.equal(await guard(), 1);
      assert.equal(ok(await editor.call('GET', `${releases('search')}/${started.id}`)).status, 'completed');
    });

    it('rolls back on a Prometheus breach held for forSeconds, and holds the step while Prometheus is away', async () => {
      let answer: { status: number; value?: string } = { status: 503 };
      const server = http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname !== '/api/v1/query' || url.searchParams.get('query') !== 'job:errors:ratio') {
          res.statusCode = 404;
          return res.end();
        }
        res.statusCode = answer.status;
        res.setHeader('content-type', 'application/json');
        res.end(
          answer.status === 200
            ? JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [Date.now() / 1000, answer.value] }] } })
            : '{"status":"error","error":"unavailable"}',
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        await createFlag(ctx(), project.key, { slug: 'payments' });
        const started = ok(
          await editor.call('POST', releases('payments'), {
            variant: 'on',
            baseline: 'off',
            steps: [{ percent: 20, holdSeconds: 60 }, { percent: 100 }],
            guardrails: [{ prometheus: { url, query: 'job:errors:ratio', above: 0.05, forSeconds: 120 } }],
          }),
          201,
        );
        offsetMs += 61_000;
        // The outage: unknown, in words, and the step is held past its time; no rollback.
        assert.equal(await guard(), 0);
        const away = ok(await editor.call('GET', `${releases('payments')}/${started.id}`));
        assert.deepEqual([away.status, away.currentStep, away.guardrails[0].state, away.waitingFor], ['running', 0, 'unknown', 'guardrail']);
        assert.match(away.guardrails[0].reason, /HTTP 503/);
        // Back, and past the threshold, not yet for forSeconds: the step is held, nothing rolls back yet.
        answer = { status: 200, value: '0.2' };
        assert.equal(await guard(), 0);
        const past = ok(await editor.call('GET', `${releases('payments')}/${started.id}`));
        assert.deepEqual([past.guardrails[0].state, past.guardrails[0].value, past.currentStep], ['collecting', 0.2, 0]);
        offsetMs += 121_000;
        assert.equal(await guard(), 1);
        const view = ok(await editor.call('GET', `${releases('payments')}/${started.id}`));
        assert.equal(view.status, 'rolled_back');
        assert.match(view.rolledBackReason, /job:errors:ratio was above 0\.05 for 1\d\d s/);
        const readings = ok(await editor.call('GET', `${releases('payments')}/${started.id}/readings`));
        assert.deepEqual(
          readings.readings.map((r: { reading: { state: string } }) => r.reading.state),
          ['unknown', 'collecting', 'breached'],
        );
      } finally {
        server.close();
      }
    });

    it('refuses plans that cannot run, and an unknown release', async () => {
      await createFlag(ctx(), project.key, { slug: 'plans' });
      const bad = await editor.call('POST', releases('plans'), { variant: 'on', baseline: 'on', steps: [{ percent: 50 }] });
      assert.equal(bad.statusCode, 400, bad.body);
      const noMetric = await editor.call('POST', releases('plans'), {
        variant: 'on',
        baseline: 'off',
        steps: [{ percent: 100 }],
        guardrails: [{ metric: 'nope' }],
      });
      assert.equal(noMetric.statusCode, 400, noMetric.body);
      assert.equal((await editor.call('GET', `${releases('plans')}/nope`)).statusCode, 404);
      assert.equal(ok(await editor.call('GET', releases('plans'))).releases.length, 0);
    });

    it('starts a release from a template, overriding parts of it', async () => {
      const base = `/admin/v1/projects/${project.key}/release-templates`;
      ok(
        await editor.call('POST', base, { key: 'careful', name: 'Careful', steps: [{ percent: 5, holdSeconds: 3600 }, { percent: 100 }], guardrails: [] }),
        201,
      );
      assert.equal((await editor.call('POST', base, { key: 'careful', name: 'Again', steps: [{ percent: 100 }] })).statusCode, 409);
      ok(await editor.call('PATCH', `${base}/careful`, { name: 'Very careful' }));
      assert.equal(ok(await editor.call('GET', base)).templates[0].name, 'Very careful');
      await createFlag(ctx(), project.key, { slug: 'templated' });
      const started = ok(await editor.call('POST', releases('templated'), { variant: 'on', baseline: 'off', template: 'careful' }), 201);
      assert.deepEqual([started.percent, started.template, started.steps.length], [5, 'careful', 2]);
      const cancelled = ok(await editor.call('POST', `${releases('templated')}/${started.id}/cancel`));
      assert.equal(cancelled.status, 'cancelled');
      ok(await editor.call('DELETE', `${base}/careful`), 204);
      assert.equal((await editor.call('GET', `${base}/careful`)).statusCode, 404);
    });
  },
  { SMTP_URL: smtp.url, FLAGPOST_WEBHOOK_TARGETS: 'private', FLAGPOST_RELEASE_CHECK_MS: '0' },
  { clock },
);

describe('releases with two PostgreSQL instances', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
  it('starts each step once and completes once when both instances run the guard at the same time', { timeout: 120_000 }, async () => {
    let now = Date.parse('2026-07-01T08:00:00.000Z');
    const fixed = () => new Date(now);
    const database = await createTestDatabase('postgres');
    const env = { FLAGPOST_RELEASE_CHECK_MS: '0' };
    const first = await startInstance(database, env, { clock: fixed });
    const second = await startInstance(database, env, { clock: fixed });
    const call = (i: typeof first, method: 'GET' | 'POST', url: string, body?: unknown) =>
      i.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    try {
      const project = ok(await call(first, 'POST', '/admin/v1/projects', { name: 'Twins' }), 201) as ProjectFixture;
      ok(await call(first, 'POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'twin' }), 201);
      const url = `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/twin/releases`;
      const started = ok(
        await call(first, 'POST', url, {
          variant: 'on',
          baseline: 'off',
          steps: [{ percent: 10, holdSeconds: 60 }, { percent: 40, holdSeconds: 60 }, { percent: 100 }],
        }),
        201,
      );
      let moves = 0;
      for (let round = 0; round < 6; round++) {
        now += 61_000;
        const [a, b] = await Promise.all([first.services.releaseGuard.runOnce(), second.services.releaseGuard.runOnce()]);
        moves += a + b;
      }
      assert.equal(moves, 3, 'two steps started and one completion');
      const audit = ok(await call(second, 'GET', `/admin/v1/audit?project=${project.key}&entity=release&entityId=${started.id}`));
      const actions = audit.entries.map((e: { action: string }) => e.action).sort();
      assert.deepEqual(actions, ['release.completed', 'release.started', 'release.step_started', 'release.step_started']);
      assert.equal(ok(await call(second, 'GET', `${url}/${started.id}`)).status, 'completed');
    } finally {
      for (const i of [first, second]) {
        await i.app.close();
        await i.services.stop();
        await i.handle.close();
      }
      await database.drop();
    }
  });
});
