import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Issue 18 through the admin API: typed flags, targeting PATCH with the engine's validation, segments,
// flagd export and import, the playground. On the real app and database.

forEachDialect('targeting admin API', (ctx) => {
  let project: ProjectFixture;
  const env = (i = 0) => project.environments[i]!.key;
  const base = () => `/admin/v1/projects/${project.key}`;
  const flagUrl = (slug: string, i = 0) => `${base()}/environments/${env(i)}/flags/${slug}`;
  const inEnv = (created: { environments: Array<Record<string, unknown>> }, i = 0) => created.environments[i]!;
  const audit = async (query: string, projectKey = project.key) =>
    (await ctx().admin('GET', `/admin/v1/audit?project=${projectKey}&${query}`)).json().entries as Array<Record<string, any>>;

  before(async () => {
    project = await createProject(ctx());
  });

  describe('typed flags', () => {
    it('creates a boolean flag exactly as before when no type is given', async () => {
      const created = await createFlag(ctx(), project.key, { slug: 'plain', enabled: true });
      const flag = inEnv(created);
      assert.equal(flag.type, 'boolean');
      assert.equal(flag.enabled, true);
      assert.deepEqual(flag.variants, { on: true, off: false });
      assert.equal(flag.defaultVariant, 'on');
      assert.equal(flag.state, 'ENABLED');
      assert.deepEqual(flag.flagd, { portable: true, note: null });
      const v1 = await ctx().app.inject({ method: 'GET', url: '/v1/flags/plain', headers: keys(project) });
      assert.deepEqual(v1.json(), { slug: 'plain', enabled: true, payload: null, expiredAt: null, description: '' });
    });

    it('creates a string flag with variants, DISABLED until switched on, and on with enabled:true', async () => {
      const off = inEnv(await createFlag(ctx(), project.key, { slug: 'color', type: 'string', variants: { red: '#f00', blue: '#00f' } }));
      assert.equal(off.type, 'string');
      assert.equal(off.state, 'DISABLED');
      assert.equal(off.defaultVariant, 'red');
      assert.equal(off.enabled, false);
      const on = inEnv(
        await createFlag(ctx(), project.key, {
          slug: 'layout',
          type: 'string',
          variants: { a: 'grid', b: 'list', c: 'cards' },
          defaultVariant: 'b',
          enabled: true,
        }),
      );
      assert.equal(on.state, 'ENABLED');
      assert.equal(on.defaultVariant, 'b');
      assert.equal(on.enabled, true);
    });

    it('refuses a string flag without variants, variants of another type and an unknown default variant, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ slug: 'x1', type: 'string' }, 'body.variants'],
        [{ slug: 'x2', type: 'number', variants: { one: 1, two: 'two' } }, 'body.variants.two'],
        [{ slug: 'x3', type: 'string', variants: { a: 'a' }, defaultVariant: 'zzz' }, 'body.defaultVariant'],
        [{ slug: 'x4', variants: { yes: false }, enabled: true }, 'body.enabled'],
      ];
      for (const [body, field] of cases) {
        const res = await ctx().admin('POST', `${base()}/flags`, body);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().details[0].field, field, res.body);
      }
    });

    it('creates a boolean flag without a false variant switched off (DISABLED), not on', async () => {
      const flag = inEnv(await createFlag(ctx(), project.key, { slug: 'only-yes', variants: { yes: true } }));
      assert.equal(flag.state, 'DISABLED');
      assert.equal(flag.enabled, false);
    });

    it('switches a string flag off and on through enabled (its state)', async () => {
      const res = await ctx().admin('PATCH', flagUrl('layout'), { enabled: false });
      assert.equal(res.json().state, 'DISABLED');
      assert.equal(res.json().defaultVariant, 'b');
      const back = await ctx().admin('PATCH', flagUrl('layout'), { enabled: true });
      assert.equal(back.json().state, 'ENABLED');
    });
  });

  describe('targeting PATCH', () => {
    before(async () => {
      await createFlag(ctx(), project.key, { slug: 'checkout', enabled: false });
    });

    it('stores rules with ids, defaults and the current bucketing, and keeps what is absent', async () => {
      const res = await ctx().admin('PATCH', flagUrl('checkout'), {
        rules: [
          { name: 'Swiss', conditions: [{ attribute: 'country', operator: 'in', values: ['CH'] }], serve: { variant: 'on' } },
          {
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
      assert.equal(res.statusCode, 200, res.body);
      const flag = res.json();
      assert.equal(flag.rules.length, 2);
      assert.match(flag.rules[0].id, /^\w+$/);
      assert.equal(flag.rules[0].enabled, true);
      assert.deepEqual(flag.rules[1].segments, []);
      assert.equal(flag.rules[1].serve.split.bucketing, 'flagd-fractional-v2');
      assert.equal(flag.defaultVariant, 'off');
      assert.equal(flag.enabled, false);
      const kept = await ctx().admin('PATCH', flagUrl('checkout'), { description: 'only this' });
      assert.deepEqual(kept.json().rules, flag.rules);
    });

    it('answers 400 naming the path of the first targeting problem, and changes nothing', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ rules: [{ serve: { variant: 'nope' } }] }, 'body.rules.0.serve.variant'],
        [
          { rules: [{ conditions: [{ attribute: 'v', operator: 'semverGt', values: ['not a version'] }], serve: { variant: 'on' } }] },
          'body.rules.0.conditions.0.values',
        ],
        [{ rules: [{ segments: ['missing'], serve: { variant: 'on' } }] }, 'body.rules.0.segments.0'],
        [{ rules: [{ serve: { variant: 'on', split: { weights: [{ variant: 'on', weight: 1 }] } } }] }, 'body.rules.0.serve'],
        [{ prerequisites: [{ flag: 'ghost', variants: ['on'] }] }, 'body.prerequisites.0.flag'],
        [{ defaultVariant: 'maybe' }, 'body.defaultVariant'],
        [{ variants: { on: true, off: 'no' } }, 'body.variants.off'],
        // JSON Logic written through the API is held to what a flagd import accepts.
        [{ rules: [], prerequisites: [], jsonLogic: { if: [{ nope: [1] }, 'on', 'off'] } }, 'body.jsonLogic.if.0'],
      ];
      const before = (await ctx().admin('GET', `${base()}/flags`)).body;
      for (const [body, field] of cases) {
        const res = await ctx().admin('PATCH', flagUrl('checkout'), body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
        assert.equal(res.json().error, true);
        assert.ok(
          res.json().details.some((d: { field: string }) => d.field.startsWith(field)),
          `${JSON.stringify(body)}: ${res.body}`,
        );
      }
      assert.equal((await ctx().admin('GET', `${base()}/flags`)).body, before);
    });

    it('refuses a prerequisite cycle', async () => {
      await createFlag(ctx(), project.key, { slug: 'pre-a' });
      await createFlag(ctx(), project.key, { slug: 'pre-b' });
      assert.equal((await ctx().admin('PATCH', flagUrl('pre-a'), { prerequisites: [{ flag: 'pre-b', variants: ['on'] }] })).statusCode, 200);
      const res = await ctx().admin('PATCH', flagUrl('pre-b'), { prerequisites: [{ flag: 'pre-a', variants: ['on'] }] });
      assert.equal(res.statusCode, 400, res.body);
    });

    it('refuses a change that breaks a flag depending on it, naming that flag', async () => {
      // pre-a has pre-b as a prerequisite (variant on): renaming pre-b's variant breaks pre-a.
      const res = await ctx().admin('PATCH', flagUrl('pre-b'), { variants: { yes: true, off: false } });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(
        res.json().details.map((d: { field: string }) => d.field),
        ['flags.pre-a.prerequisites.0.variants.0'],
      );
    });

    it('refuses to delete a flag that is a prerequisite of another, naming it', async () => {
      const res = await ctx().admin('DELETE', `${base()}/flags/pre-b`);
      assert.equal(res.statusCode, 409, res.body);
      assert.match(res.json().message, /Flag pre-b is a prerequisite of these flags: pre-a \(development\)/);
    });

    it('derives enabled from the default serve on every change; DISABLED is off', async () => {
      let res = await ctx().admin('PATCH', flagUrl('checkout'), { defaultVariant: 'on' });
      assert.equal(res.json().enabled, true);
      res = await ctx().admin('PATCH', flagUrl('checkout'), { state: 'DISABLED' });
      assert.equal(res.json().enabled, false);
      res = await ctx().admin('PATCH', flagUrl('checkout'), { enabled: true });
      assert.equal(res.json().state, 'ENABLED');
      assert.equal(res.json().defaultVariant, 'on');
      const v1 = await ctx().app.inject({ method: 'GET', url: '/v1/flags/checkout', headers: keys(project) });
      assert.equal(v1.json().enabled, true, '/v1 shows the default serve of a flag with rules');
    });

    it('records only the changed targeting fields in the audit log', async () => {
      await ctx().admin('PATCH', flagUrl('checkout'), { defaultVariant: 'off' });
      const [entry] = await audit('entity=flag&entityId=checkout');
      assert.equal(entry!.action, 'flag.updated');
      assert.deepEqual(entry!.changes, { enabled: { before: true, after: false }, defaultVariant: { before: 'on', after: 'off' } });
    });
  });

  describe('segments', () => {
    it('creates, reads, lists and changes a segment, audited', async () => {
      const created = await ctx().admin('POST', `${base()}/segments`, {
        key: 'swiss',
        name: 'Swiss users',
        conditions: [{ attribute: 'country', operator: 'equals', values: ['CH'] }],
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().match, 'all');
      assert.equal((await ctx().admin('GET', `${base()}/segments/swiss`)).json().name, 'Swiss users');
      const patched = await ctx().admin('PATCH', `${base()}/segments/swiss`, { match: 'any', description: 'CH or LI' });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().match, 'any');
      assert.deepEqual(patched.json().conditions, created.json().conditions);
      const list = await ctx().admin('GET', `${base()}/segments`);
      assert.deepEqual(
        list.json().segments.map((s: { key: string }) => s.key),
        ['swiss'],
      );
      const entries = await audit('entity=segment&entityId=swiss');
      assert.deepEqual(
        entries.map((e) => e.action),
        ['segment.updated', 'segment.created'],
      );
      assert.deepEqual(entries[0]!.changes, { description: { before: '', after: 'CH or LI' }, match: { before: 'all', after: 'any' } });
    });

    it('answers 409 for a key the project has, 404 for an unknown one, 400 naming a bad condition', async () => {
      assert.equal(
        (await ctx().admin('POST', `${base()}/segments`, { key: 'swiss', conditions: [{ attribute: 'a', operator: 'exists', values: [] }] })).statusCode,
        409,
      );
      const missing = await ctx().admin('GET', `${base()}/segments/nope`);
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().message, `Segment with key nope does not exist in project ${project.key}`);
      const bad = await ctx().admin('POST', `${base()}/segments`, {
        key: 'ips',
        conditions: [{ attribute: 'ip', operator: 'inCidr', values: ['not-a-cidr'] }],
      });
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().details[0].field, 'body.conditions.0.values.0');
    });

    it('refuses to delete a segment a rule uses in any environment, naming the flags, then deletes it once unused', async () => {
      await createFlag(ctx(), project.key, { slug: 'swiss-promo' });
      const rules = [{ segments: ['swiss'], serve: { variant: 'on' } }];
      assert.equal((await ctx().admin('PATCH', flagUrl('swiss-promo', 2), { rules })).statusCode, 200);
      const refused = await ctx().admin('DELETE', `${base()}/segments/swiss`);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().message, 'Segment swiss is used by rules of these flags: swiss-promo (production)');
      assert.equal((await ctx().admin('GET', `${base()}/segments/swiss`)).statusCode, 200, 'still there');
      assert.equal((await ctx().admin('PATCH', flagUrl('swiss-promo', 2), { rules: [] })).statusCode, 200);
      assert.equal((await ctx().admin('DELETE', `${base()}/segments/swiss`)).statusCode, 204);
      assert.equal((await ctx().admin('GET', `${base()}/segments/swiss`)).statusCode, 404);
      assert.equal((await audit('entity=segment&entityId=swiss'))[0]!.action, 'segment.deleted');
    });
  });

  describe('flagd export and import', () => {
    let other: ProjectFixture;
    const otherBase = () => `/admin/v1/projects/${other.key}`;
    const flagd = (i = 0) => `${otherBase()}/environments/${other.environments[i]!.key}/flagd`;

    before(async () => {
      other = await createProject(ctx(), 'Flagd');
      await ctx().admin('POST', `${otherBase()}/segments`, {
        key: 'beta',
        // A name and a description, which flagd's $evaluators do not carry: an import keeps them.
        name: 'Beta testers',
        description: 'Who tries things first',
        conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@example.com'] }],
      });
      await createFlag(ctx(), other.key, { slug: 'new-ui', enabled: true });
      await createFlag(ctx(), other.key, { slug: 'theme', type: 'string', variants: { dark: 'dark', light: 'light' }, enabled: true });
      const res = await ctx().admin('PATCH', `${otherBase()}/environments/${other.environments[0]!.key}/flags/theme`, {
        rules: [
          { id: 'beta', name: 'Beta', segments: ['beta'], serve: { variant: 'dark' } },
          {
            id: 'half',
            name: 'Half',
            serve: {
              split: {
                weights: [
                  { variant: 'dark', weight: 50 },
                  { variant: 'light', weight: 50 },
                ],
              },
            },
          },
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
    });

    it("exports the environment's flags and segments as a flagd definition", async () => {
      const res = await ctx().admin('GET', flagd());
      assert.equal(res.statusCode, 200, res.body);
      const doc = res.json();
      assert.equal(doc.$schema, 'https://flagd.dev/schema/v0/flags.json');
      assert.deepEqual(Object.keys(doc.flags), ['new-ui', 'theme']);
      assert.deepEqual(doc.flags['new-ui'], { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' });
      assert.equal(doc.flags.theme.defaultVariant, 'dark');
      assert.ok(doc.flags.theme.targeting, 'rules become JSON Logic');
      assert.match(JSON.stringify(doc.flags.theme.targeting), /"\$ref":"beta"/);
      assert.match(JSON.stringify(doc.flags.theme.targeting), /"fractional"/);
      assert.ok(doc.$evaluators.beta, 'segments are $evaluators');
    });

    it('round-trips: export -> import into another environment -> export gives the same definition', async () => {
      const exported = (await ctx().admin('GET', flagd(0))).json();
      const imported = await ctx().admin('PUT', flagd(1), exported);
      assert.equal(imported.statusCode, 200, imported.body);
      // new-ui was created switched on in every environment already; theme has rules only in the first.
      assert.deepEqual(imported.json(), { created: [], updated: ['theme'], unchanged: ['new-ui'], segments: [] });
      assert.deepEqual((await ctx().admin('GET', flagd(1))).json(), exported);
      const again = await ctx().admin('PUT', flagd(1), exported);
      assert.deepEqual(again.json(), { created: [], updated: [], unchanged: ['new-ui', 'theme'], segments: [] });
    });

    it('creates new flags, updates named ones, leaves the others alone, and gives new flags a safe default elsewhere', async () => {
      const before = (await ctx().admin('GET', `${otherBase()}/flags`)).json();
      const doc = {
        $schema: 'https://flagd.dev/schema/v0/flags.json',
        flags: {
          'new-ui': { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off' },
          limit: {
            state: 'ENABLED',
            variants: { low: 10, high: 100 },
            defaultVariant: 'high',
            targeting: { if: [{ '===': [{ var: 'plan' }, 'free'] }, 'low', null] },
          },
          banner: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' },
        },
      };
      const res = await ctx().admin('PUT', flagd(2), doc);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { created: ['limit', 'banner'], updated: ['new-ui'], unchanged: [], segments: [] });
      const after = (await ctx().admin('GET', `${otherBase()}/flags`)).json().flags as Array<{ slug: string; environments: Array<Record<string, any>> }>;
      const get = (slug: string, i: number) => after.find((f) => f.slug === slug)!.environments[i]!;
      assert.equal(get('new-ui', 2).defaultVariant, 'off');
      assert.equal(get('new-ui', 2).enabled, false);
      assert.deepEqual(get('theme', 2), before.flags.find((f: { slug: string }) => f.slug === 'theme').environments[2], 'left alone');
      assert.equal(get('limit', 2).type, 'number');
      assert.equal(get('limit', 2).state, 'ENABLED');
      assert.ok(get('limit', 2).jsonLogic || get('limit', 2).rules.length === 1, 'the targeting is kept');
      for (const i of [0, 1]) {
        assert.equal(get('limit', i).state, 'DISABLED', 'a new non-boolean flag is DISABLED elsewhere');
        assert.deepEqual(get('limit', i).variants, { low: 10, high: 100 });
        assert.deepEqual(get('limit', i).rules, []);
        assert.equal(get('limit', i).jsonLogic, null);
        assert.equal(get('banner', i).defaultVariant, 'off', 'a new boolean flag serves off elsewhere');
        assert.equal(get('banner', i).enabled, false);
      }
      const entries = await audit('entity=flag&entityId=limit', other.key);
      assert.equal(entries[0]!.action, 'flag.created');
      assert.equal(entries[0]!.environmentKey, other.environments[2]!.key);
      const summary = (await audit('entity=environment', other.key))[0]!;
      assert.equal(summary.action, 'environment.flagd_imported');
      assert.deepEqual(summary.changes.created, { after: ['limit', 'banner'] });
    });

    it('answers 400 naming the flag and JSON path of the first problem, and changes nothing', async () => {
      const before = (await ctx().admin('GET', `${otherBase()}/flags`)).body;
      const beforeSegments = (await ctx().admin('GET', `${otherBase()}/segments`)).body;
      const cases: Array<[unknown, RegExp]> = [
        [
          { flags: { ok: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' }, bad: { state: 'ON', variants: { on: true } } } },
          /\/flags\/bad\/state/,
        ],
        [{ flags: { x: { state: 'ENABLED', variants: { a: 1 }, defaultVariant: 'b' } } }, /\/flags\/x\/defaultVariant/],
        [{ flags: { x: { state: 'ENABLED', variants: { a: 1 }, defaultVariant: 'a', targeting: { nope: [1] } } } }, /\/flags\/x\/targeting/],
        [{ flags: { preview: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' } } }, /\/flags\/preview/],
        [{ notFlags: true }, /\/flags/],
      ];
      for (const [doc, path] of cases) {
        const res = await ctx().admin('PUT', flagd(0), {
          ...(doc as object),
          $evaluators: { fresh: { in: [{ var: 'country' }, ['CH']] } },
        });
        assert.equal(res.statusCode, 400, res.body);
        assert.match(res.json().message, /^Invalid flagd definition at /);
        assert.match(res.json().message, path, res.body);
      }
      assert.equal((await ctx().admin('GET', `${otherBase()}/flags`)).body, before);
      assert.equal((await ctx().admin('GET', `${otherBase()}/segments`)).body, beforeSegments);
    });

    it('answers 409 when the definition changes the type of an existing flag, and changes nothing', async () => {
      const before = (await ctx().admin('GET', `${otherBase()}/flags`)).body;
      const res = await ctx().admin('PUT', flagd(0), {
        flags: {
          fresh: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' },
          theme: { state: 'ENABLED', variants: { one: 1 }, defaultVariant: 'one' },
        },
      });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().message, 'Flag theme is a string flag; the definition makes it a number flag');
      assert.equal((await ctx().admin('GET', `${otherBase()}/flags`)).body, before);
    });

    it('creates and updates segments from $evaluators', async () => {
      const doc = (await ctx().admin('GET', flagd(0))).json();
      doc.$evaluators = JSON.parse(JSON.stringify(doc.$evaluators).replace('@example.com', '@example.org'));
      const res = await ctx().admin('PUT', flagd(0), doc);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().segments, ['beta']);
      const segment = (await ctx().admin('GET', `${otherBase()}/segments/beta`)).json();
      assert.deepEqual(segment.conditions[0].values, ['@example.org']);
      assert.deepEqual([segment.name, segment.description], ['Beta testers', 'Who tries things first']);
    });
  });

  describe('playground', () => {
    it('explains which rule matched and which conditions failed, as OFREP answers', async () => {
      await ctx().admin('POST', `${base()}/segments`, { key: 'staff', conditions: [{ attribute: 'email', operator: 'endsWith', values: ['@corp.example'] }] });
      await createFlag(ctx(), project.key, { slug: 'pg', type: 'string', variants: { a: 'A', b: 'B', c: 'C' }, defaultVariant: 'a', enabled: true });
      const patched = await ctx().admin('PATCH', flagUrl('pg'), {
        rules: [
          { id: 'ch', name: 'Swiss', conditions: [{ attribute: 'country', operator: 'equals', values: ['CH'] }], serve: { variant: 'b' } },
          { id: 'staff', name: 'Staff', segments: ['staff'], serve: { variant: 'c' } },
        ],
      });
      assert.equal(patched.statusCode, 200, patched.body);
      const context = { targetingKey: 'u1', country: 'DE', email: 'ann@corp.example' };
      const res = await ctx().admin('POST', `${base()}/environments/${env()}/evaluate`, { context, flag: 'pg' });
      assert.equal(res.statusCode, 200, res.body);
      const [result] = res.json().flags;
      assert.equal(result.value, 'C');
      assert.equal(result.variant, 'c');
      assert.equal(result.reason, 'TARGETING_MATCH');
      assert.equal(result.explanation.matchedRuleId, 'staff');
      assert.equal(result.explanation.rules[0].held, false);
      assert.equal(result.explanation.rules[0].conditions[0].held, false);
      assert.equal(result.explanation.rules[1].segments[0].held, true);

      const all = await ctx().admin('POST', `${base()}/environments/${env()}/evaluate`, { context });
      assert.equal(all.statusCode, 200, all.body);
      const slugs = all.json().flags.map((f: { key: string }) => f.key);
      assert.ok(slugs.includes('pg') && slugs.includes('plain'));
      assert.equal(all.json().flags.find((f: { key: string }) => f.key === 'plain').explanation, null);
    });

    it('shows the bucket a split chose', async () => {
      await createFlag(ctx(), project.key, { slug: 'rollout' });
      await ctx().admin('PATCH', flagUrl('rollout'), {
        rules: [
          {
            id: 'r',
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
      const res = await ctx().admin('POST', `${base()}/environments/${env()}/evaluate`, { context: { targetingKey: 'user-42' }, flag: 'rollout' });
      const [result] = res.json().flags;
      const split = result.explanation.rules[0].split;
      assert.equal(split.totalWeight, 100);
      assert.ok(split.bucket >= 0 && split.bucket < 100);
      assert.equal(split.variant, split.bucket < 25 ? 'on' : 'off');
      assert.equal(result.variant, split.variant);
    });

    it('answers what OFREP answers for the same context (value, variant, reason, metadata)', async () => {
      for (const context of [
        { targetingKey: 'u1', country: 'CH' },
        { targetingKey: 'u2', country: 'DE', email: 'bob@corp.example' },
        { targetingKey: 'u3' },
        { targetingKey: 'user-42' },
        {},
      ]) {
        const played = (await ctx().admin('POST', `${base()}/environments/${env()}/evaluate`, { context })).json().flags as Array<Record<string, unknown>>;
        for (const slug of ['pg', 'rollout', 'plain', 'checkout', 'layout']) {
          const mine = played.find((f) => f.key === slug)!;
          const ofrep = await ctx().app.inject({
            method: 'POST',
            url: `/ofrep/v1/evaluate/flags/${slug}`,
            headers: { ...keys(project), 'content-type': 'application/json' },
            payload: JSON.stringify({ context }),
          });
          const answer = ofrep.json();
          const label = `${slug} ${JSON.stringify(context)}: ${ofrep.body}`;
          assert.equal(answer.reason, mine.reason, label);
          assert.deepEqual(answer.value, mine.value, label);
          assert.equal(answer.variant, mine.variant, label);
          for (const [k, v] of Object.entries(mine.metadata as object)) assert.deepEqual(answer.metadata?.[k], v, `${label} metadata ${k}`);
        }
      }
    });

    it('rebuilds every environment of the project at once when a segment changes', async () => {
      await ctx().admin('POST', `${base()}/segments`, { key: 'vip', conditions: [{ attribute: 'tier', operator: 'equals', values: ['platinum'] }] });
      await createFlag(ctx(), project.key, { slug: 'vip-lounge' });
      for (const i of [0, 1]) {
        const res = await ctx().admin('PATCH', flagUrl('vip-lounge', i), { rules: [{ segments: ['vip'], serve: { variant: 'on' } }] });
        assert.equal(res.statusCode, 200, res.body);
      }
      const ofrep = async (i: number) =>
        (
          await ctx().app.inject({
            method: 'POST',
            url: '/ofrep/v1/evaluate/flags/vip-lounge',
            headers: { ...keys(project, i), 'content-type': 'application/json' },
            payload: JSON.stringify({ context: { targetingKey: 'u9', tier: 'gold' } }),
          })
        ).json().value;
      assert.deepEqual([await ofrep(0), await ofrep(1)], [false, false]);
      const patched = await ctx().admin('PATCH', `${base()}/segments/vip`, {
        conditions: [{ attribute: 'tier', operator: 'in', values: ['gold', 'platinum'] }],
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.deepEqual([await ofrep(0), await ofrep(1)], [true, true], 'the next read after the answer sees the segment change');
    });

    it('answers 404 for an unknown flag', async () => {
      const res = await ctx().admin('POST', `${base()}/environments/${env()}/evaluate`, { context: {}, flag: 'ghost' });
      assert.equal(res.statusCode, 404);
    });
  });
});
