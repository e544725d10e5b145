import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { flagTypeOf, readUnleash, variantValue } from '../../src/documents/index.ts';

// Issue 21, migration from Unleash, judged by Unleash's own client specification
// (@unleash/client-specification 6.1.0): each specification's state is imported through the admin API,
// and every `isEnabled` and `getVariant` case is evaluated through OFREP. Unleash's context maps to
// OpenFeature's as Unleash's OpenFeature provider maps it: `userId` is the targeting key, `properties`
// and the other fields are attributes. A toggle without variants is a boolean flag (its value is
// isEnabled); a toggle with variants is a typed flag that serves the variant (its name is OFREP's
// `variant`) and serves no value when Unleash answers "disabled".
//
// Every case of every specification passes. The specification's random rollouts are at 0 % and 100 %,
// which Flagpost carries exactly; the delta-API files (19, 20) describe an SDK's event stream, not a
// configuration to import (docs/adr/0039).

const SPEC_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@unleash/client-specification/package.json')), 'specifications');

type Json = Record<string, any>;

function ofrepContext(context: Json): Json {
  const out: Json = { ...(context.properties ?? {}) };
  for (const [k, v] of Object.entries(context)) {
    if (k === 'properties') continue;
    out[k === 'userId' ? 'targetingKey' : k] = v;
  }
  return out;
}

forEachDialect('Unleash client specification through import and OFREP', (ctx) => {
  const files = (JSON.parse(fs.readFileSync(path.join(SPEC_DIR, 'index.json'), 'utf8')) as string[]).filter(
    (f) => !f.startsWith('19-') && !f.startsWith('20-'),
  );
  let total = 0;

  before(() => {
    assert.ok(files.length >= 20, 'the specification lists its files');
  });

  for (const file of files) {
    it(`passes ${file}`, async () => {
      const spec = JSON.parse(fs.readFileSync(path.join(SPEC_DIR, file), 'utf8')) as Json;
      const res = await ctx().admin('POST', '/admin/v1/imports/unleash', { export: spec.state, projectName: file, environment: 'production' });
      assert.equal(res.statusCode, 200, res.body);
      const projectKey = res.json().projectKey as string;
      const project = (await ctx().admin('GET', `/admin/v1/projects/${projectKey}`)).json();
      const headers = { 'x-project-key': projectKey, 'x-environment-key': project.environments[0].key, 'content-type': 'application/json' };
      const model = readUnleash(spec.state, 'production');
      const features = new Map(model.features.map((f) => [f.name, f]));
      const evaluate = async (toggle: string, context: Json) => {
        const answer = await ctx().app.inject({
          method: 'POST',
          url: `/ofrep/v1/evaluate/flags/${encodeURIComponent(toggle)}`,
          headers,
          payload: JSON.stringify({ context: ofrepContext(context) }),
        });
        return { status: answer.statusCode, body: answer.json() as Json };
      };
      const failures: string[] = [];
      for (const t of (spec.tests ?? []) as Json[]) {
        const label = `${file}: ${t.description}`;
        total++;
        const { status, body } = await evaluate(t.toggleName, t.context);
        const feature = features.get(t.toggleName);
        let enabled: boolean;
        if (!feature) enabled = status === 200 && body.value === true;
        else if (flagTypeOf([...feature.environments.values()].flatMap((e) => [...e.variants, ...e.strategies.flatMap((s) => s.variants)])) === 'boolean')
          enabled = body.value === true;
        else enabled = body.value !== undefined;
        if (enabled !== t.expectedResult) failures.push(`${label}: expected ${t.expectedResult}, OFREP ${status} ${JSON.stringify(body)}`);
      }
      for (const t of (spec.variantTests ?? []) as Json[]) {
        const label = `${file}: ${t.description}`;
        total++;
        const { status, body } = await evaluate(t.toggleName, t.context);
        const expected = t.expectedResult as Json;
        const feature = features.get(t.toggleName);
        const variants = feature ? [...feature.environments.values()].flatMap((e) => [...e.variants, ...e.strategies.flatMap((s) => s.variants)]) : [];
        const type = flagTypeOf(variants);
        let ok: boolean;
        if (!feature) ok = expected.name === 'disabled' && status === 404;
        else if (type === 'boolean') ok = expected.name === 'disabled' && body.value === expected.feature_enabled;
        else if (expected.name === 'disabled') ok = body.value === undefined;
        else {
          const v = variants.find((x) => x.name === expected.name);
          ok = v !== undefined && body.variant === expected.name && JSON.stringify(body.value) === JSON.stringify(variantValue(type, v));
        }
        if (!ok) failures.push(`${label}: expected ${JSON.stringify(expected)}, OFREP ${status} ${JSON.stringify(body)}`);
      }
      assert.deepEqual(failures, []);
    });
  }

  it('ran the specification cases', () => {
    assert.equal(total, 275, 'every isEnabled and getVariant case of the pinned specification');
  });
});
