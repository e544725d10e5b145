import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { compileEnvironment, type CompiledEnvironment } from '../../src/targeting/engine.ts';
import { parseFlagdDefinition } from '../../src/targeting/flagd-import.ts';
import { providerDetails, testbedPlans, testbedPresent, TESTBED_FLAGS } from '../support/flagd-testbed.ts';

// The flagd evaluator testkit (../shared/conformance/flagd-testbed): its flags imported through
// parseFlagdDefinition, compiled, and every scenario evaluated through compileEnvironment. Scenarios
// tagged @fractional-v1 (flagd's superseded bucketing) and @fractional-v3 (not shipped by flagd) are
// skipped; the whole suite is skipped when the folder is absent.

const present = testbedPresent();

describe('flagd evaluator testkit through the targeting engine', { skip: present ? false : 'the flagd testbed folder is absent' }, () => {
  if (!present) return;
  const parsed = parseFlagdDefinition(JSON.parse(fs.readFileSync(TESTBED_FLAGS, 'utf8')));
  let env: CompiledEnvironment | undefined;

  it('imports the testkit flags', () => {
    assert.equal(parsed.problem, undefined, JSON.stringify(parsed.problem));
    env = compileEnvironment(parsed.flags!, parsed.segments!);
  });

  for (const { plan, skipped } of testbedPlans()) {
    it(`${plan.scenario.file}: ${plan.scenario.name}`, { skip: skipped ? `tagged ${skipped}` : false }, () => {
      assert.ok(env, 'the testkit flags compiled');
      const details = providerDetails(plan, env.evaluate(plan.flagKey, plan.context));
      const e = plan.expect;
      if ('value' in e) assert.deepEqual(details.value, e.value, 'value');
      if (e.reason !== undefined) assert.equal(details.reason, e.reason, 'reason');
      if (e.errorCode !== undefined) assert.equal(details.errorCode, e.errorCode, 'error code');
      if (e.metadata) for (const [k, v] of Object.entries(e.metadata)) assert.deepEqual(details.metadata[k], v, `metadata ${k}`);
      if (e.metadataEmpty) assert.deepEqual(details.metadata, {}, 'metadata');
    });
  }
});
