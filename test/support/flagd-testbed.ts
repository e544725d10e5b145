import fs from 'node:fs';
import path from 'node:path';
import { readFeatures, type Scenario } from './gherkin.ts';

// The flagd evaluator testkit beside the project (../shared/conformance/flagd-testbed from the root),
// read into plans: which flag to evaluate as which type with which fallback and context, and what
// the details must be. Shared by the engine's test and the OFREP one.

const ROOT = path.resolve(import.meta.dirname, '../..');
/** FLAGD_TESTBED_DIR, else `../shared/...` beside the project (or beside the folder of git worktrees), else the copy in test/fixtures. */
export const TESTBED_DIR =
  [
    process.env.FLAGD_TESTBED_DIR,
    path.join(ROOT, '../shared/conformance/flagd-testbed'),
    path.join(ROOT, '../../shared/conformance/flagd-testbed'),
    path.join(ROOT, 'test/fixtures/flagd-testbed'),
  ]
    .filter((d): d is string => d !== undefined && d !== '')
    .map((d) => path.join(d, 'evaluator'))
    .find((d) => fs.existsSync(d)) ?? path.join(ROOT, '../shared/conformance/flagd-testbed/evaluator');
export const TESTBED_FLAGS = path.join(TESTBED_DIR, 'flags/testkit-flags.json');
/** @fractional-v1 is flagd's superseded bucketing; @fractional-v3 is a proposal flagd has not shipped. */
export const SKIPPED_TAGS = ['@fractional-v1', '@fractional-v3'];

export const testbedPresent = (): boolean => fs.existsSync(path.join(TESTBED_DIR, 'gherkin')) && fs.existsSync(TESTBED_FLAGS);

export type TestbedType = 'Boolean' | 'String' | 'Integer' | 'Float' | 'Object';

export interface TestbedPlan {
  scenario: Scenario;
  flagKey: string;
  type: TestbedType;
  fallback: unknown;
  context: Record<string, unknown>;
  expect: {
    value?: unknown;
    reason?: string;
    errorCode?: string;
    metadata?: Record<string, unknown>;
    metadataEmpty?: boolean;
  };
}

/** A cell's text as a value of a testbed type (`Integer` "13" -> 13, `Object` JSON). */
export function typedValue(type: string, text: string): unknown {
  switch (type) {
    case 'Boolean':
      return text === 'true';
    case 'Integer':
      return Number.parseInt(text, 10);
    case 'Float':
      return Number.parseFloat(text);
    case 'Object':
      return JSON.parse(text.replace(/\\"/g, '"'));
    default:
      return text;
  }
}

/** The plan of one scenario; throws on a step it does not know (so a new testkit step is noticed). */
export function planOf(scenario: Scenario): TestbedPlan {
  const plan: TestbedPlan = { scenario, flagKey: '', type: 'String', fallback: undefined, context: {}, expect: {} };
  for (const step of scenario.steps) {
    const t = step.text;
    let m: RegExpExecArray | null;
    if (t === 'an evaluator' || t === 'the flag was evaluated with details') continue;
    if ((m = /^a (\w+)-flag with key "([^"]*)" and a fallback value "(.*)"$/.exec(t))) {
      plan.type = m[1] as TestbedType;
      plan.flagKey = m[2]!;
      plan.fallback = typedValue(plan.type, m[3]!);
    } else if ((m = /^a context containing a key "([^"]*)", with type "([^"]*)" and with value "(.*)"$/.exec(t))) {
      plan.context[m[1]!] = typedValue(m[2]!, m[3]!);
    } else if ((m = /^a context containing a nested property with outer key "([^"]*)" and inner key "([^"]*)", with value "(.*)"$/.exec(t))) {
      plan.context[m[1]!] = { [m[2]!]: m[3]! };
    } else if ((m = /^a context containing a targeting key with value "([^"]*)"$/.exec(t))) {
      plan.context.targetingKey = m[1]!;
    } else if ((m = /^the resolved details value should be "(.*)"$/.exec(t))) {
      plan.expect.value = typedValue(plan.type, m[1]!);
    } else if ((m = /^the reason should be "([^"]*)"$/.exec(t))) {
      plan.expect.reason = m[1]!;
    } else if ((m = /^the error-code should be "([^"]*)"$/.exec(t))) {
      plan.expect.errorCode = m[1]!;
    } else if (t === 'the resolved metadata should contain') {
      plan.expect.metadata = Object.fromEntries((step.table ?? []).map((row) => [row.key!, typedValue(row.metadata_type!, row.value!)]));
    } else if (t === 'the resolved metadata is empty') {
      plan.expect.metadataEmpty = true;
    } else throw new Error(`${scenario.file}: unknown step: ${t}`);
  }
  return plan;
}

/** Every scenario of the testkit with its plan, and whether it is skipped. */
export function testbedPlans(): Array<{ plan: TestbedPlan; skipped: string | undefined }> {
  return readFeatures(path.join(TESTBED_DIR, 'gherkin')).map((scenario) => ({
    plan: planOf(scenario),
    skipped: scenario.tags.find((tag) => SKIPPED_TAGS.includes(tag)),
  }));
}

/** What an OpenFeature provider makes of an answer: the caller's fallback unless a value of the asked type came. */
export function providerDetails(
  plan: TestbedPlan,
  answer: { value?: unknown; reason: string; errorCode?: string; metadata?: Record<string, unknown> } | undefined,
): { value: unknown; reason: string; errorCode?: string; metadata: Record<string, unknown> } {
  if (!answer) return { value: plan.fallback, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND', metadata: {} };
  const metadata = answer.metadata ?? {};
  if (answer.value === undefined) return { value: plan.fallback, reason: answer.reason, errorCode: answer.errorCode, metadata };
  const expected = plan.type === 'Integer' || plan.type === 'Float' ? 'number' : plan.type.toLowerCase();
  const actual = answer.value !== null && typeof answer.value === 'object' ? 'object' : typeof answer.value;
  if (actual !== expected) return { value: plan.fallback, reason: 'ERROR', errorCode: 'TYPE_MISMATCH', metadata };
  return { value: answer.value, reason: answer.reason, errorCode: answer.errorCode, metadata };
}
