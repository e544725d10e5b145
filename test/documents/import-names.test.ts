import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createProject, type ProjectFixture } from '../support/fixtures.ts';

// Imports that lost or accepted what they should not (issue 29, item 15): a flagd `$ref` to an
// evaluator the document does not define, and Unleash names that are also JavaScript's own
// (`__proto__`), which plain objects swallowed.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers read field by field, as in the other import tests
type Json = Record<string, any>;

forEachDialect('import names (issue 29)', (ctx) => {
  let project: ProjectFixture;
  const flagd = () => `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flagd`;

  before(async () => {
    project = await createProject(ctx(), 'Imports');
  });

  it('refuses a flagd $ref to an evaluator the document does not define, naming it, and changes nothing', async () => {
    const doc = {
      $evaluators: { staff: { in: ['@corp.com', { var: 'email' }] } },
      flags: {
        ok: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off' },
        gated: {
          state: 'ENABLED',
          variants: { on: true, off: false },
          defaultVariant: 'off',
          targeting: { if: [{ or: [{ $ref: 'staff' }, { $ref: 'betaTesters' }] }, 'on', 'off'] },
        },
      },
    };
    const res = await ctx().admin('PUT', flagd(), doc);
    assert.equal(res.statusCode, 400, res.body);
    const body = res.json() as Json;
    assert.equal(body.error, true);
    assert.match(body.message, /betaTesters/);
    assert.ok(
      body.details.some((d: Json) => /betaTesters/.test(d.reason)),
      res.body,
    );
    const flags = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).json().flags as Json[];
    assert.deepEqual(
      flags.map((f) => f.slug),
      [],
      'nothing was imported',
    );
    // With the evaluator defined, the same document imports.
    const fixed = { ...doc, $evaluators: { ...doc.$evaluators, betaTesters: { '==': [{ var: 'beta' }, true] } } };
    const ok = await ctx().admin('PUT', flagd(), fixed);
    assert.equal(ok.statusCode, 200, ok.body);
  });

  it('keeps an Unleash variant and environment named __proto__ and lists a feature named __proto__ as not carried', async () => {
    const state = {
      version: 2,
      features: [
        { name: '__proto__', enabled: true, strategies: [{ name: 'default' }] },
        {
          name: 'colour',
          enabled: true,
          strategies: [{ name: 'default' }],
          variants: [
            { name: '__proto__', weight: 1000, stickiness: 'default', payload: { type: 'string', value: 'odd' } },
            { name: 'plain', weight: 0, stickiness: 'default', payload: { type: 'string', value: 'plain' } },
          ],
        },
      ],
      segments: [],
    };
    const res = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: state, environment: '__proto__', projectName: 'Protos' });
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json() as Json;
    assert.deepEqual(
      answer.notCarried.map((n: Json) => `${n.feature} ${n.item}`),
      ['__proto__ toggle'],
      'the refused feature is listed, nothing else is renamed',
    );
    const p = (await ctx().admin('GET', `/admin/v1/projects/${answer.projectKey}`)).json() as ProjectFixture & { environments: Json[] };
    assert.deepEqual(
      p.environments.map((e) => e.name),
      ['__proto__'],
    );
    const doc = (await ctx().admin('GET', `/admin/v1/projects/${answer.projectKey}/document`)).json() as Json;
    assert.deepEqual(Object.keys(doc.flags), ['colour']);
    assert.deepEqual(Object.keys(doc.flags.colour.environments), ['__proto__']);
    assert.deepEqual(doc.flags.colour.environments.__proto__.variants, JSON.parse('{"__proto__":"odd","plain":"plain"}'));
  });
});
