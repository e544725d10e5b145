import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createProject } from '../support/fixtures.ts';

// A large flagd import must not hold the process (issue 29, item 14): a 992 KB definition kept the
// event loop (and, on SQLite, the one connection /healthz asked) for 20 s. It is now validated in
// slices and written with turns of the event loop in between; health asks SQLite directly.

/** A flagd definition of about 1 MB: 1,500 flags with JSON Logic and segments as `$evaluators`. */
function largeDefinition() {
  const $evaluators: Record<string, unknown> = {};
  for (let s = 0; s < 50; s++) $evaluators[`seg${s}`] = { and: [{ in: [{ var: 'country' }, ['fr', 'de', `x${s}`]] }, { '===': [{ var: 'plan' }, 'pro'] }] };
  const flags: Record<string, unknown> = {};
  for (let i = 0; i < 1500; i++) {
    flags[`flag-${i}`] = {
      state: 'ENABLED',
      variants: { on: true, off: false },
      defaultVariant: 'off',
      targeting: {
        if: [
          { $ref: `seg${i % 50}` },
          'on',
          { in: [{ var: 'email' }, Array.from({ length: 18 }, (_, j) => `user-${i}-${j}@example.com`)] },
          'on',
          {
            fractional: [
              ['on', 50],
              ['off', 50],
            ],
          },
        ],
      },
    };
  }
  return { flags, $evaluators };
}

forEachDialect('a large flagd import (issue 29)', (ctx) => {
  it('answers /healthz while a definition of about 1 MB is imported', async () => {
    const project = await createProject(ctx(), 'Large import');
    const doc = largeDefinition();
    assert.ok(JSON.stringify(doc).length > 900_000, 'about 1 MB');
    let done = false;
    const importing = ctx()
      .admin('PUT', `/admin/v1/projects/${project.key}/environments/${project.environments[0]!.key}/flagd`, doc)
      .finally(() => {
        done = true;
      });
    let answeredDuring = 0;
    while (!done) {
      const health = await ctx().app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200, health.body);
      if (!done) answeredDuring++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const res = await importing;
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().created.length, 1500);
    assert.ok(answeredDuring >= 2, `health answered ${answeredDuring} times while the import ran`);
  });
});
