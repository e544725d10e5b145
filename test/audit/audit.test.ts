import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createProject, type ProjectFixture } from '../support/fixtures.ts';

// The audit log (issue 13, ADR 0020): each kind of admin write appends exactly one entry, with the actor
// and the changed fields, in the write's transaction; a failed write appends none; secrets never appear.

interface Entry {
  id: string;
  at: string;
  actor: { type: string; id: string | null; label: string };
  projectKey: string | null;
  entity: string;
  entityId: string;
  environmentKey: string | null;
  action: string;
  changes: Record<string, { before?: unknown; after?: unknown }>;
}

const SLACK = 'https://hooks.slack.com/services/T0000/B0000/slack-secret-part-0123456789';
const CAPTCHA_SECRET = 'captcha-secret-never-in-the-log-0123456789';

forEachDialect('audit log', (ctx) => {
  let project: ProjectFixture;
  const secrets: string[] = [SLACK, CAPTCHA_SECRET];

  const all = async (query = ''): Promise<Entry[]> => {
    const res = await ctx().admin('GET', `/admin/v1/audit?limit=200${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().entries;
  };
  /** Runs a write and answers the entries it appended (newest first). */
  const appended = async (write: () => Promise<{ statusCode: number; body: string }>, status: number) => {
    const beforeIds = new Set((await all()).map((e) => e.id));
    const res = await write();
    assert.equal(res.statusCode, status, res.body);
    return { res, entries: (await all()).filter((e) => !beforeIds.has(e.id)) };
  };
  const only = (entries: Entry[]) => {
    assert.equal(entries.length, 1, JSON.stringify(entries));
    return entries[0]!;
  };

  before(async () => {
    project = await createProject(ctx(), 'Audited');
  });

  it('records the project creation with the admin token as actor', async () => {
    const entries = await all(`&project=${project.key}`);
    const entry = only(entries);
    assert.equal(entry.action, 'project.created');
    assert.equal(entry.entity, 'project');
    assert.equal(entry.entityId, project.key);
    assert.equal(entry.projectKey, project.key);
    assert.deepEqual(entry.actor, { type: 'admin_token', id: null, label: 'admin token' });
    assert.deepEqual(entry.changes.name, { after: 'Audited' });
  });

  describe('one entry per kind of write, with its diff', () => {
    const p = () => `/admin/v1/projects/${project.key}`;
    let formKey = '';
    let submissionId = '';
    let apiKeyId = '';

    const cases: Array<{ name: string; write: () => Promise<{ statusCode: number; body: string }>; status: number; check: (e: Entry, body: string) => void }> =
      [
        {
          name: 'environment created',
          write: () => ctx().admin('POST', `${p()}/environments`, { name: 'qa' }),
          status: 201,
          check: (e, body) => {
            assert.equal(e.action, 'environment.created');
            assert.equal(e.entityId, JSON.parse(body).key);
            assert.deepEqual(e.changes.name, { after: 'qa' });
          },
        },
        {
          name: 'flag created',
          write: () => ctx().admin('POST', `${p()}/flags`, { slug: 'checkout', description: 'New checkout', enabled: false }),
          status: 201,
          check: (e) => {
            assert.equal(e.action, 'flag.created');
            assert.equal(e.entity, 'flag');
            assert.equal(e.entityId, 'checkout');
            assert.deepEqual(e.changes.description, { after: 'New checkout' });
            assert.deepEqual(e.changes.enabled, { after: false });
          },
        },
        {
          name: 'flag updated in one environment',
          write: () =>
            ctx().admin('PATCH', `${p()}/environments/${project.environments[2]!.key}/flags/checkout`, { enabled: true, description: 'New checkout' }),
          status: 200,
          check: (e) => {
            assert.equal(e.action, 'flag.updated');
            assert.equal(e.environmentKey, project.environments[2]!.key);
            // Only what changed: the description was sent unchanged.
            // Switching a boolean flag on serves its `on` variant by default (docs/adr/0025).
            assert.deepEqual(e.changes, { enabled: { before: false, after: true }, defaultVariant: { before: 'off', after: 'on' } });
          },
        },
        {
          name: 'API key created',
          write: async () => {
            const res = await ctx().admin('POST', `${p()}/api-keys`, { name: 'ci' });
            secrets.push(res.json().token);
            apiKeyId = res.json().id;
            return res;
          },
          status: 201,
          check: (e) => {
            assert.equal(e.action, 'api_key.created');
            assert.equal(e.entityId, apiKeyId);
            assert.deepEqual(e.changes.name, { after: 'ci' });
          },
        },
        {
          name: 'API key revoked',
          write: () => ctx().admin('DELETE', `${p()}/api-keys/${apiKeyId}`),
          status: 204,
          check: (e) => assert.equal(e.action, 'api_key.revoked'),
        },
        {
          name: 'form created with secrets',
          write: async () => {
            const res = await ctx().admin('POST', '/admin/v1/forms', {
              name: 'Contact',
              webhookUrl: 'https://hooks.example.com/flagpost',
              slackWebhookUrl: SLACK,
              captcha: { provider: 'turnstile', secret: CAPTCHA_SECRET },
            });
            formKey = res.json().key;
            secrets.push(res.json().webhookSecret);
            return res;
          },
          status: 201,
          check: (e) => {
            assert.equal(e.action, 'form.created');
            assert.equal(e.entityId, formKey);
            assert.equal(e.projectKey, null);
            assert.deepEqual(e.changes.slackWebhookUrl, { after: '[redacted]' });
            assert.deepEqual(e.changes.webhookSecret, { after: '[redacted]' });
            assert.deepEqual(e.changes.captcha, { after: { provider: 'turnstile', minScore: null, secret: '[redacted]' } });
          },
        },
        {
          name: 'webhook secret rotated',
          write: async () => {
            const res = await ctx().admin('POST', `/admin/v1/forms/${formKey}/webhook-secret`);
            secrets.push(res.json().webhookSecret);
            return res;
          },
          status: 200,
          check: (e) => assert.equal(e.action, 'form.webhook_secret_rotated'),
        },
        {
          name: 'form updated',
          // Deliveries and the CAPTCHA go, so that the submissions below are accepted and sent nowhere.
          write: () => ctx().admin('PATCH', `/admin/v1/forms/${formKey}`, { uploadsEnabled: true, slackWebhookUrl: null, webhookUrl: null, captcha: null }),
          status: 200,
          check: (e) => {
            assert.equal(e.action, 'form.updated');
            assert.deepEqual(e.changes, {
              uploadsEnabled: { before: false, after: true },
              webhookUrl: { before: 'https://hooks.example.com/flagpost', after: null },
              captcha: { before: { provider: 'turnstile', minScore: null, secret: '[redacted]' }, after: null },
              slackWebhookUrl: { before: '[redacted]', after: null },
              webhookSecret: { before: '[redacted]', after: null },
            });
          },
        },
        {
          name: 'submission marked as spam',
          write: async () => {
            const sent = await ctx().app.inject({ method: 'POST', url: `/v1/s/${formKey}?mode=rest`, payload: { email: 'ada@example.com', message: 'hi' } });
            submissionId = sent.json().id;
            return ctx().admin('PATCH', `/admin/v1/forms/${formKey}/submissions/${submissionId}`, { spam: true });
          },
          status: 200,
          check: (e) => {
            assert.equal(e.action, 'submission.updated');
            assert.deepEqual(e.changes, { spam: { before: false, after: true } });
          },
        },
        {
          name: 'submission deleted',
          write: () => ctx().admin('DELETE', `/admin/v1/forms/${formKey}/submissions/${submissionId}`),
          status: 204,
          check: (e) => {
            assert.equal(e.action, 'submission.deleted');
            assert.equal(e.entityId, submissionId);
          },
        },
        {
          name: 'personal data erased',
          write: async () => {
            await ctx().app.inject({ method: 'POST', url: `/v1/s/${formKey}?mode=rest`, payload: { email: 'grace@example.com' } });
            return ctx().admin('POST', '/admin/v1/personal-data/erase', { email: 'grace@example.com' });
          },
          status: 200,
          check: (e) => {
            assert.equal(e.action, 'personal_data.erased');
            assert.equal((e.changes.submissions!.before as string[]).length, 1);
            assert.doesNotMatch(JSON.stringify(e), /grace/);
          },
        },
        {
          name: "a branch's code references deleted",
          write: () => ctx().admin('DELETE', `${p()}/code-refs?branch=old`),
          status: 200,
          check: (e) => {
            assert.equal(e.action, 'code_refs.branch_deleted');
            assert.equal(e.entityId, 'old');
          },
        },
        {
          name: 'flag deleted',
          write: () => ctx().admin('DELETE', `${p()}/flags/checkout`),
          status: 204,
          check: (e) => {
            assert.equal(e.action, 'flag.deleted');
            assert.deepEqual(e.changes.enabledIn, { before: [project.environments[2]!.key] });
          },
        },
        {
          name: 'form deleted',
          write: () => ctx().admin('DELETE', `/admin/v1/forms/${formKey}`),
          status: 204,
          check: (e) => assert.equal(e.action, 'form.deleted'),
        },
      ];

    for (const c of cases) {
      it(c.name, async () => {
        const { res, entries } = await appended(c.write, c.status);
        const entry = only(entries);
        assert.deepEqual(entry.actor, { type: 'admin_token', id: null, label: 'admin token' });
        c.check(entry, res.body);
      });
    }

    it('records nothing for a write that changes nothing (a key revoked again)', async () => {
      const { entries } = await appended(() => ctx().admin('DELETE', `${p()}/api-keys/${apiKeyId}`), 204);
      assert.deepEqual(entries, []);
    });

    it('never records a secret', async () => {
      const text = JSON.stringify(await all());
      for (const secret of secrets) assert.ok(!text.includes(secret), `a secret is in the log: ${secret.slice(0, 12)}…`);
    });
  });

  describe('failed writes', () => {
    it('leave no entry: validation, not found, conflict, and a rollback after the write', async () => {
      await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'twice' });
      const writes = [
        () => ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'twice' }),
        () => ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'bad slug!' }),
        () => ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/nope`, { enabled: true }),
        () => ctx().admin('DELETE', `/admin/v1/projects/${project.key}/api-keys/01J0000000000000000000000`),
        () => ctx().admin('PATCH', '/admin/v1/forms/nope', { enabled: false }),
      ];
      for (const write of writes) {
        const { entries } = await appended(write, (await write()).statusCode);
        assert.deepEqual(entries, []);
      }
    });

    it('rolls the entry back with the write when the transaction fails after it', async () => {
      // The audit row is written inside the transaction; a failure of a transaction subscriber after it
      // (here: one added for the test) rolls both back.
      ctx().services.events.onTransaction('flag.changed', async (event) => {
        if (event.slug === 'doomed') throw new Error('injected failure');
      });
      const before = (await all()).length;
      const res = await ctx().admin('POST', `/admin/v1/projects/${project.key}/flags`, { slug: 'doomed' });
      assert.equal(res.statusCode, 500);
      assert.equal((await all()).length, before);
      const listed = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).json().flags as Array<{ slug: string }>;
      assert.ok(!listed.some((f) => f.slug === 'doomed'));
    });
  });

  describe('listing', () => {
    it('filters by project, entity and id, actor type and time range, newest first, paged', async () => {
      const history = await all(`&project=${project.key}&entity=flag&entityId=checkout`);
      assert.deepEqual(
        history.map((e) => e.action),
        ['flag.deleted', 'flag.updated', 'flag.created'],
      );
      assert.deepEqual(await all('&project=unknown'), []);
      assert.equal((await all('&actorType=user')).length, 0);
      const everything = await all();
      const middle = everything[Math.floor(everything.length / 2)]!;
      const since = await all(`&since=${encodeURIComponent(middle.at)}`);
      assert.ok(since.every((e) => e.at >= middle.at));
      const until = await all(`&until=${encodeURIComponent(middle.at)}`);
      assert.ok(until.every((e) => e.at < middle.at));
      assert.equal(since.length + until.length, everything.length);
      const first = await ctx().admin('GET', '/admin/v1/audit?limit=2');
      const second = await ctx().admin('GET', `/admin/v1/audit?limit=2&cursor=${first.json().nextCursor}`);
      assert.equal(second.statusCode, 200, second.body);
      assert.deepEqual(
        [...first.json().entries, ...second.json().entries].map((e: Entry) => e.id),
        everything.slice(0, 4).map((e) => e.id),
      );
    });

    it('refuses bad filters with 400 and has no route that changes an entry', async () => {
      for (const query of ['entityId=x', 'entity=planet', 'since=yesterday', 'until=2026-13-45', 'actorType=root', 'limit=0', 'colour=red']) {
        const res = await ctx().admin('GET', `/admin/v1/audit?${query}`);
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().error, true);
      }
      const id = (await all())[0]!.id;
      for (const method of ['DELETE', 'PATCH', 'PUT'] as const) {
        assert.equal((await ctx().admin(method, `/admin/v1/audit/${id}`, {})).statusCode, 404);
        assert.equal((await ctx().admin(method, '/admin/v1/audit', {})).statusCode, 404);
      }
    });
  });
});

// Retention of the log (FLAGPOST_AUDIT_RETENTION_DAYS), with time from the clock port.
let now = Date.parse('2026-03-01T12:00:00.000Z');
forEachDialect(
  'audit log retention',
  (ctx) => {
    const entries = async () => (await ctx().admin('GET', '/admin/v1/audit?limit=200')).json().entries as Entry[];

    it('deletes entries older than the setting in the retention round, and keeps the newer ones', async () => {
      await createProject(ctx(), 'Old');
      now += 5 * 86_400_000;
      await createProject(ctx(), 'Recent');
      now += 25 * 86_400_000;
      // 30 days after the first, 25 after the second: a retention of 28 days keeps only the second.
      assert.equal((await entries()).length, 2);
      await ctx().services.retention.runOnce();
      const left = await entries();
      assert.deepEqual(
        left.map((e) => e.changes.name?.after),
        ['Recent'],
      );
    });
  },
  { FLAGPOST_AUDIT_RETENTION_DAYS: '28', FLAGPOST_RETENTION_INTERVAL_MS: '0' },
  { clock: () => new Date(now) },
);
