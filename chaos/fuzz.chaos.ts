import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { ADMIN_TOKEN, forEachDialect } from '../test/support/context.ts';
import { createApiKey, createFlag, createProject } from '../test/support/fixtures.ts';
import { createForm } from '../test/support/forms.ts';

// Issue 8: a seeded run of hostile requests over every public and admin route of the OpenAPI
// document. No answer may be a 5xx or carry a stack or a driver message, the process stays up, and a
// request that was refused changes nothing. FUZZ_SEED replays a run; FUZZ_REQUESTS sets its length.

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const LEAKS = ['    at ', 'node_modules', 'SQLITE_', 'syntax error', 'relation "', 'violates', 'pg_', 'TypeError', 'ReferenceError', 'FST_'];

/** mulberry32: a small seeded generator, so that a failing run can be replayed. */
function generator(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  return { next, int, pick };
}

forEachDialect(
  'fuzz: hostile requests over every route',
  (ctx) => {
    it(`answers ${REQUESTS} seeded requests (seed ${SEED}) without a 5xx, a leak or a change`, { timeout: 600_000 }, async (t) => {
      const project = await createProject(ctx());
      await createFlag(ctx(), project.key, { slug: 'beta', isPreview: true, previewName: 'Beta' });
      // Targeting (issue 18): a segment a rule uses, so that its routes reach real data too.
      const segment = await ctx().admin('POST', `/admin/v1/projects/${project.key}/segments`, {
        key: 'staff',
        conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }],
      });
      assert.equal(segment.statusCode, 201, segment.body);
      const rules = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flags/beta`, {
        rules: [{ segments: ['staff'], serve: { variant: 'on' } }],
      });
      assert.equal(rules.statusCode, 200, rules.body);
      const apiKey = await createApiKey(ctx(), project.key);
      const form = await createForm(ctx(), { uploadsEnabled: true, webhookUrl: 'http://127.0.0.1:9/hook' });
      // Issue 34: forms with every new setting, so that hostile submissions (on /v1/s and the Formspree
      // path) meet field rules, a file policy, spam checks, templates, routing and the view counter; one
      // asks for a proof of work and rate limits, which refuse before anything is stored.
      const checked = await createForm(ctx(), {
        uploadsEnabled: true,
        honeypot: '_gotcha',
        fieldRules: {
          properties: {
            email: { type: 'string', format: 'email' },
            age: { type: 'integer', minimum: 0 },
            topic: { type: 'string', enum: ['sales', 'support'] },
          },
        },
        filePolicy: { allowedTypes: ['application/pdf', 'image/*'], maxFileBytes: 100_000, maxFiles: 2 },
        spamChecks: {
          duplicates: { enabled: true, windowMinutes: 5 },
          minFillSeconds: 2,
          disposableEmails: true,
          rules: [{ attribute: 'message', operator: 'matches', values: ['(?i)casino'] }],
        },
        notifyEmails: ['team@example.com'],
        notifications: { subject: 'New message from {{ name }}', cc: ['cc@example.com'] },
        autoResponse: { enabled: true, subject: 'Thanks {{ name }}', body: '<p>{{ message }}</p>', includeSubmission: true },
        webhooks: [{ url: 'http://127.0.0.1:9/routed', conditions: [{ attribute: 'topic', operator: 'equals', values: ['sales'] }] }],
        analytics: { views: true },
      });
      const guarded = await createForm(ctx(), { spamChecks: { proofOfWork: true, rateLimit: { perAddress: 2, perMinute: 50 } } });
      const readToken = (await ctx().admin('POST', `/admin/v1/forms/${checked.key}/read-tokens`, { name: 'fuzz' })).json().token as string;
      const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
      const routes = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ path, method: method.toUpperCase() })));
      assert.ok(routes.length >= 35);

      // The content of every table, so that a refused request that changed anything is caught at once.
      // The outbox's rows change by themselves while the worker tries deliveries: only their ids count.
      const tables = [
        'projects',
        'environments',
        'flags',
        'segments',
        'change_requests',
        'change_items',
        'change_approvals',
        'change_comments',
        'change_notifications',
        'api_keys',
        'feedback',
        'code_refs',
        'forms',
        'submissions',
        'submission_files',
        'settings',
        'project_webhooks',
        'form_read_tokens',
        'form_view_counts',
      ];
      const digest = async () => {
        const hash = createHash('sha256');
        for (const table of tables) {
          const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by 1`.execute(ctx().handle.db);
          hash.update(`${table}:${JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))}\n`);
        }
        const { rows } = await sql<{ id: string }>`select id from outbox order by id`.execute(ctx().handle.db);
        hash.update(`outbox:${rows.map((row) => row.id).join(',')}`);
        // Project webhooks' deliveries too: the worker changes their state by itself.
        const hooks = await sql<{ id: string }>`select id from project_webhook_deliveries order by id`.execute(ctx().handle.db);
        hash.update(`project_webhook_deliveries:${hooks.rows.map((row) => row.id).join(',')}`);
        return hash.digest('hex');
      };
      let current = await digest();

      const g = generator(SEED);
      const strings = [
        '',
        'x',
        'a'.repeat(300),
        '%00',
        '\u0000',
        '../../etc/passwd',
        '<script>',
        "' or 1=1 --",
        '__proto__',
        'constructor',
        '%E0%A4%A',
        '😀',
        ' ',
        '-1',
        '1e309',
        'null',
      ];
      const params: Record<string, readonly string[]> = {
        projectKey: [project.key, 'nope', ...strings],
        envKey: [project.environments[0]!.key, 'nope', ...strings],
        slug: ['beta', 'preview', 'code-refs', ...strings],
        segmentKey: ['staff', 'nope', ...strings],
        id: ['01J0000000000000000000000', ...strings],
        fileId: ['x', ...strings],
        formKey: [form.key, checked.key, checked.key, guarded.key, 'nope', ...strings],
        tokenId: ['01J0000000000000000000000', ...strings],
        deliveryId: ['01J0000000000000000000000', ...strings],
      };
      const values = (): unknown => {
        switch (g.int(9)) {
          case 0:
            return g.pick(strings);
          case 1:
            return g.int(2) ? g.int(1e9) - 5e8 : 1.5;
          case 2:
            return g.int(2) === 1;
          case 3:
            return null;
          case 4:
            return [values(), values()];
          case 5:
            return {
              [g.pick([
                'name',
                'slug',
                'enabled',
                'payload',
                'flagKey',
                'mood',
                'rating',
                'references',
                'websites',
                'webhookUrl',
                'variant',
                'attribute',
                'targetingKey',
                'if',
                'var',
                'fieldRules',
                'filePolicy',
                'spamChecks',
                'notifications',
                'autoResponse',
                'webhooks',
                'analytics',
                'views',
                'email',
                'message',
                'topic',
                '_gotcha',
                'altcha',
              ])]: values(),
            };
          case 6:
            return 'z'.repeat(g.int(70_000));
          case 7: {
            let deep: unknown = 1;
            for (let i = 0; i < 40; i++) deep = { d: deep };
            return deep;
          }
          default:
            return g.pick(['HAPPY', 'main', 'https://x.example', 'ada@example.com']);
        }
      };
      const body = (): { payload?: string | Buffer; type?: string } => {
        switch (g.int(7)) {
          case 0:
            return {};
          case 1:
            return {
              payload: JSON.stringify(
                Object.fromEntries(
                  Array.from({ length: g.int(6) }, () => [
                    g.pick([
                      'name',
                      'slug',
                      'flagKey',
                      'mood',
                      'rating',
                      'branch',
                      'projectName',
                      'references',
                      'metadata',
                      'enabled',
                      'websites',
                      'blockedIps',
                      'type',
                      'variants',
                      'defaultVariant',
                      'state',
                      'rules',
                      'prerequisites',
                      'jsonLogic',
                      'conditions',
                      'match',
                      'key',
                      'context',
                      'flag',
                      'flags',
                      '$evaluators',
                      'fieldRules',
                      'filePolicy',
                      'spamChecks',
                      'notifications',
                      'autoResponse',
                      'webhooks',
                      'analytics',
                      'captcha',
                      'email',
                      '_replyto',
                      'message',
                      'topic',
                      'age',
                      '_gotcha',
                      '_flagpost_rendered',
                      'altcha',
                      'document',
                      g.pick(strings),
                    ]),
                    values(),
                  ]),
                ),
              ),
              type: 'application/json',
            };
          case 2:
            return { payload: '{"a":', type: 'application/json' };
          case 3:
            return {
              payload: Buffer.from(Array.from({ length: g.int(3000) }, () => g.int(256))),
              type: g.pick(['application/octet-stream', 'text/plain', 'application/json']),
            };
          case 4:
            return {
              payload: Array.from({ length: g.int(300) }, (_, i) => `${g.pick(strings)}${i}=${encodeURIComponent(String(values()))}`).join('&'),
              type: 'application/x-www-form-urlencoded',
            };
          case 5:
            return {
              payload: `--b\r\nContent-Disposition: form-data; name="${g.pick(strings)}"${g.int(2) ? '; filename="f.bin"' : ''}\r\n\r\n${g.pick(strings)}\r\n--b${g.int(2) ? '--' : ''}\r\n`,
              type: 'multipart/form-data; boundary=b',
            };
          default:
            return { payload: JSON.stringify(values()), type: g.pick(['application/json', 'application/json; charset=utf-8', 'application/xml']) };
        }
      };

      let writes2xx = 0;
      const statuses = new Map<number, number>();
      for (let i = 0; i < REQUESTS; i++) {
        const route = g.pick(routes);
        const method = g.int(10) === 0 ? g.pick(['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD']) : route.method;
        const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(g.pick(params[name] ?? strings)));
        const query =
          g.int(3) === 0
            ? `?${g.pick(['limit', 'cursor', 'spam', 'mode', 'slug', 'message', 'sig', 'q', 'order', 'field.topic', `field.${g.pick(strings)}`, 'days', 'since', 'until', 'spamCheck'])}=${encodeURIComponent(g.pick([...strings, '"near" OR*', 'sales', 'asc', '30', '2026-11-01T00:00:00Z']))}`
            : '';
        const headers: Record<string, string> = {};
        if (g.int(3)) headers['x-project-key'] = g.pick(params.projectKey!);
        if (g.int(3)) headers['x-environment-key'] = g.pick(params.envKey!);
        if (g.int(3) === 0) headers['x-api-key'] = g.pick([apiKey, 'fpk_nope', ...strings]);
        // The Formspree libraries' headers (issue 34): the page-load time and webdriver flag, hostile too.
        if (g.int(4) === 0)
          headers['formspree-session-data'] = g.pick([
            Buffer.from(JSON.stringify({ loadedAt: Date.now() - 5000, webdriver: true })).toString('base64'),
            ...strings,
          ]);
        if (g.int(4) === 0) headers['formspree-client'] = g.pick(['@formspree/react@3.0.0', ...strings]);
        // Mostly no or a wrong admin token, from many addresses (so that the lockout does not answer everything).
        const auth = g.int(4);
        if (auth === 0) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
        else if (auth === 1) headers.authorization = g.pick(['Bearer nope', 'Basic x', 'Bearer', '', `Bearer ${readToken}`, 'Bearer fpf_nope']);
        const { payload, type } = method === 'GET' || method === 'HEAD' ? {} : body();
        if (type) headers['content-type'] = type;
        const remoteAddress = `10.${g.int(256)}.${g.int(256)}.${g.int(256)}`;
        const options: InjectOptions = { method: method as InjectOptions['method'], url: path + query, headers, remoteAddress };
        if (payload !== undefined) options.payload = payload;
        const res = await ctx().app.inject(options);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const label = `#${i} ${method} ${path}${query} -> ${res.statusCode}`;
        assert.ok(res.statusCode < 500, `${label}: ${res.body.slice(0, 300)}`);
        const text = res.body.slice(0, 20_000);
        if (res.statusCode >= 400) for (const leak of LEAKS) assert.ok(!text.includes(leak), `${label} leaks "${leak}": ${text.slice(0, 300)}`);
        const accepted = (res.statusCode >= 200 && res.statusCode < 300) || String(res.headers.location ?? '').includes('/v1/s/success');
        if (accepted && !['GET', 'HEAD', 'OPTIONS'].includes(method)) writes2xx++;
        // A rejected request changes nothing; an accepted one moves the baseline.
        const now = await digest();
        if (now !== current) {
          assert.ok(accepted, `${label} was refused but changed the data: ${res.body.slice(0, 300)}`);
          current = now;
        }
      }
      t.diagnostic(
        `statuses: ${[...statuses]
          .sort((a, b) => a[0] - b[0])
          .map(([s, n]) => `${s}x${n}`)
          .join(' ')}; accepted writes: ${writes2xx}`,
      );
      assert.equal((await ctx().app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'still answering');
      assert.equal(await digest(), current, 'nothing changed after the last answer');
    });
  },
  { FLAGPOST_WEBHOOK_TARGETS: 'private' },
);

// Issue 32: random batches to POST /v1/track, valid events mixed with hostile ones. Never a 5xx; a batch
// with one bad event is refused whole and stores nothing; an accepted batch stores every event of it.
const TRACK_BATCHES = Number(process.env.FUZZ_TRACK_BATCHES ?? 400);

forEachDialect('fuzz: random event batches to /v1/track', (ctx) => {
  it(`answers ${TRACK_BATCHES} seeded batches (seed ${SEED}) without a 5xx; a refused batch stores nothing`, { timeout: 600_000 }, async (t) => {
    const project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout', type: 'string', variants: { control: 'a', treatment: 'b' }, defaultVariant: 'control' });
    const headers = { 'content-type': 'application/json', 'x-project-key': project.key, 'x-environment-key': project.environments[0]!.key };
    const g = generator(SEED + 32);
    const keys = ['ada@example.com', 'user-1', 'ü-ñ-😀', "o'brien; drop table exposures;--", '%', '_', 'a'.repeat(256), ' '];
    const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
    const valid = (): Record<string, unknown> =>
      g.int(2)
        ? {
            kind: 'exposure',
            flagKey: 'checkout',
            variant: g.pick(['control', 'treatment']),
            targetingKey: g.pick(keys),
            ...(g.int(2) ? { timestamp: iso(-g.int(86_400_000)) } : {}),
          }
        : {
            kind: 'track',
            name: g.pick(['purchase', 'signup', 'päge_view', 'x'.repeat(256)]),
            targetingKey: g.pick(keys),
            ...(g.int(2) ? { value: g.pick([0, -1, 12.5, 1e300, null]) } : {}),
            ...(g.int(3) === 0 ? { attributes: { plan: 'pro', seats: 3, trial: false, note: null } } : {}),
          };
    // Each makes its event invalid; markers are replaced in the JSON text (values JSON.stringify cannot write).
    const hostile: Array<(e: Record<string, unknown>) => void> = [
      (e) => (e.kind = g.pick(['Exposure', 'click', 1, null])),
      (e) => delete e.kind,
      (e) => delete e.targetingKey,
      (e) => (e.targetingKey = g.pick(['', 7, ['a'], { a: 1 }, 'a'.repeat(257), '\u0000x'])),
      (e) => (e.timestamp = g.pick(['yesterday', '2026-01-01', iso(3_600_000), iso(-8 * 86_400_000), 17, '2026-13-45T99:00:00Z'])),
      (e) => (e.extra = 1),
      (e) => (e.__PROTO__ = { polluted: true }),
      (e) => (e.kind === 'track' ? (e.value = g.pick(['12', true, '__INF__', { v: 1 }])) : (e.variant = g.pick(['off', '', 'CONTROL']))),
      (e) =>
        e.kind === 'track' ? (e.attributes = g.pick([{ nested: { a: 1 } }, [1, 2], 'x', { list: [1] }, { n: '__INF__' }])) : (e.flagKey = 'no-such-flag'),
      (e) => (e.kind === 'track' ? (e.name = g.pick(['', 5, 'n'.repeat(257)])) : delete e.flagKey),
    ];
    const count = async () =>
      Number(
        (await sql<{ n: number }>`select (select count(*) from exposures) + (select count(*) from tracked_events) as n`.execute(ctx().handle.db)).rows[0]!.n,
      );

    let stored = await count();
    const statuses = new Map<number, number>();
    for (let i = 0; i < TRACK_BATCHES; i++) {
      const size = g.pick([1, 2, 5, 20, 100, 1000, 1001]);
      const events = Array.from({ length: size }, valid);
      let bad = size > 1000;
      for (let j = g.int(3) === 0 ? 1 + g.int(3) : 0; j > 0; j--) {
        g.pick(hostile)(g.pick(events));
        bad = true;
      }
      let body: string;
      const shape = g.int(20);
      if (shape === 0) {
        body = g.pick(['[]', '{}', '{"events":{}}', '{"events":[]}', '{"events":null}', 'null', '{"events":[1,2]}', '{"events":[', '{"events":[{}]} x']);
        bad = true;
      } else body = JSON.stringify({ events }).replaceAll('"__INF__"', '1e400').replaceAll('"__PROTO__"', '"__proto__"');
      const res = await ctx().app.inject({ method: 'POST', url: '/v1/track', headers, payload: body });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const label = `#${i} (${size} events${bad ? ', hostile' : ''}) -> ${res.statusCode}`;
      assert.ok(res.statusCode < 500, `${label}: ${res.body.slice(0, 300)}`);
      const now = await count();
      if (bad) {
        assert.ok(res.statusCode >= 400, `${label}: a hostile batch was accepted: ${res.body.slice(0, 300)}`);
        assert.equal(res.json().error, true, label);
        for (const leak of LEAKS) assert.ok(!res.body.includes(leak), `${label} leaks "${leak}"`);
        assert.equal(now, stored, `${label}: a refused batch stored events`);
      } else {
        assert.equal(res.statusCode, 202, `${label}: ${res.body.slice(0, 300)}`);
        assert.equal(now, stored + size, `${label}: every event of an accepted batch is stored`);
      }
      stored = now;
    }
    assert.deepEqual({}.constructor.prototype.polluted, undefined, 'no prototype was polluted');
    t.diagnostic(
      `statuses: ${[...statuses]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}x${n}`)
        .join(' ')}`,
    );
  });
});
