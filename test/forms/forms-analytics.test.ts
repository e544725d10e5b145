import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createForm, submitJson } from '../support/forms.ts';

// Issue 34: a form's analytics per UTC day, and the optional view counter, on both engines.
const NOW = Date.parse('2026-11-27T15:30:00.000Z');

forEachDialect(
  'forms: analytics',
  (ctx) => {
    const view = (formKey: string, headers: Record<string, string> = {}) => ctx().app.inject({ method: 'GET', url: `/v1/s/${formKey}/view`, headers });
    const analytics = async (formKey: string, query = '') => {
      const res = await ctx().admin('GET', `/admin/v1/forms/${formKey}/analytics${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };

    it('answers every day oldest first with zeros filled, 30 days by default', async () => {
      const form = await createForm(ctx());
      const body = await analytics(form.key);
      assert.equal(body.days.length, 30);
      assert.deepEqual(body.days[0], { date: '2026-10-29', submissions: 0, spam: 0, deliveryFailures: 0, views: 0 });
      assert.equal(body.days[29].date, '2026-11-27');
      assert.deepEqual(body.totals, { submissions: 0, spam: 0, deliveryFailures: 0, views: 0, conversionRate: null });
      assert.deepEqual((await analytics(form.key, '?days=1')).days, [{ date: '2026-11-27', submissions: 0, spam: 0, deliveryFailures: 0, views: 0 }]);
      assert.equal((await analytics(form.key, '?days=365')).days.length, 365);
      for (const bad of ['0', '366', '-1', '1.5', 'x', '1000'])
        assert.equal((await ctx().admin('GET', `/admin/v1/forms/${form.key}/analytics?days=${bad}`)).statusCode, 400, bad);
      assert.equal((await ctx().admin('GET', '/admin/v1/forms/nope/analytics')).statusCode, 404);
    });

    it('counts submissions (not spam), spam and failed deliveries per UTC day', async () => {
      const form = await createForm(ctx(), { honeypot: '_trap' });
      const id = async (body: Record<string, unknown>, at: string) => {
        const created = (await submitJson(ctx(), form.key, body)).json().id as string;
        await ctx().handle.db.updateTable('submissions').set({ created_at: at }).where('id', '=', created).execute();
        return created;
      };
      await id({ a: 1 }, '2026-11-25T23:59:59.999Z');
      const withDelivery = await id({ a: 2 }, '2026-11-26T00:00:00.000Z');
      await id({ a: 3, _trap: 'bot' }, '2026-11-26T12:00:00.000Z');
      await id({ a: 4 }, '2026-11-27T01:00:00.000Z');
      // Older than the window: not counted.
      await id({ a: 5 }, '2026-11-24T23:00:00.000Z');
      const formId = (await ctx().handle.db.selectFrom('forms').select('id').where('key', '=', form.key).executeTakeFirstOrThrow()).id;
      for (const [n, status] of [
        [1, 'failed'],
        [2, 'failed'],
        [3, 'delivered'],
      ] as const) {
        await ctx()
          .handle.db.insertInto('outbox')
          .values({
            id: `01JTESTOUTBOX0000000000000${n}`,
            submission_id: withDelivery,
            form_id: formId,
            kind: 'webhook',
            target: 'https://hooks.example.test/x',
            payload: '{}',
            status,
            attempts: 1,
            next_attempt_at: '2026-11-26T00:00:00.000Z',
            last_error: null,
            created_at: '2026-11-26T00:00:01.000Z',
            delivered_at: null,
          })
          .execute();
      }
      const body = await analytics(form.key, '?days=3');
      assert.deepEqual(body, {
        days: [
          { date: '2026-11-25', submissions: 1, spam: 0, deliveryFailures: 0, views: 0 },
          { date: '2026-11-26', submissions: 1, spam: 1, deliveryFailures: 2, views: 0 },
          { date: '2026-11-27', submissions: 1, spam: 0, deliveryFailures: 0, views: 0 },
        ],
        totals: { submissions: 3, spam: 1, deliveryFailures: 2, views: 0, conversionRate: null },
      });
    });

    it('counts views only for a form whose analytics turn them on: 204 with CORS, else 404; a conversion rate from them', async () => {
      const form = await createForm(ctx(), { websites: ['https://site.example'] });
      const off = await view(form.key, { origin: 'https://site.example' });
      assert.equal(off.statusCode, 404);
      assert.equal(off.json().message, `Error: Form ${form.key} does not count views (its analytics setting turns them on)`);
      assert.equal(off.headers['access-control-allow-origin'], 'https://site.example');
      assert.equal((await view('nosuchformkey000')).statusCode, 404);
      const patched = await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { analytics: { views: true } });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.deepEqual(patched.json().analytics, { views: true });
      for (let i = 0; i < 4; i++) {
        const res = await view(form.key, { origin: 'https://site.example' });
        assert.equal(res.statusCode, 204, res.body);
        assert.equal(res.headers['access-control-allow-origin'], 'https://site.example');
        assert.equal(res.headers['cache-control'], 'no-store');
      }
      await submitJson(ctx(), form.key, { a: 1 }, { headers: { origin: 'https://site.example' } });
      const body = await analytics(form.key, '?days=2');
      assert.deepEqual(body.days[1], { date: '2026-11-27', submissions: 1, spam: 0, deliveryFailures: 0, views: 4 });
      assert.deepEqual(body.totals, { submissions: 1, spam: 0, deliveryFailures: 0, views: 4, conversionRate: 0.25 });
      // One row per form and day, nothing about the viewer.
      const rows = await ctx().handle.db.selectFrom('form_view_counts').selectAll().execute();
      assert.deepEqual(
        rows.map((r) => ({ day: r.day, views: Number(r.views) })),
        [{ day: '2026-11-27', views: 4 }],
      );
      assert.deepEqual(Object.keys(rows[0]!).sort(), ['day', 'form_id', 'views']);
      // A disabled form counts nothing.
      await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { enabled: false });
      assert.equal((await view(form.key)).statusCode, 404);
      assert.equal((await ctx().admin('PATCH', `/admin/v1/forms/${form.key}`, { analytics: { views: 'yes' } })).statusCode, 400);
    });
  },
  { FLAGPOST_RATE_LIMIT_MAX: '0' },
  { clock: () => new Date(NOW) },
);

forEachDialect(
  'forms: the view counter under the rate limit',
  (ctx) => {
    it('is rate limited as the submit endpoint is (429 past the limit, nothing counted)', async () => {
      const form = await createForm(ctx(), { analytics: { views: true } });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await ctx().app.inject({ method: 'GET', url: `/v1/s/${form.key}/view` })).statusCode);
      // The form's creation took no budget: the admin API is not a limited surface.
      assert.deepEqual(statuses, [204, 204, 204, 429]);
      const rows = await ctx().handle.db.selectFrom('form_view_counts').select('views').execute();
      assert.equal(Number(rows[0]!.views), 3);
    });
  },
  { FLAGPOST_RATE_LIMIT_MAX: '3', FLAGPOST_RATE_LIMIT_WINDOW_MS: '60000' },
);
