import { type CompiledEnvironment, compileEnvironment, type Condition, MAX_CONTEXT_STRING_LENGTH } from '../targeting/index.ts';

// Conditions on a submission's fields (issue 34: routing of notifications and webhooks), evaluated by
// the targeting engine itself: the conditions become the one rule of a boolean flag, and the fields
// are the evaluation context (`topic` `equals` `sales`, `message` `matches` a pattern, `ip` `inCidr`).

const KEY = 'route';

/** Compiled condition lists by their JSON; a form's few routes are compiled once. */
const compiled = new Map<string, CompiledEnvironment>();
const MAX_COMPILED = 1000;

function environmentOf(conditions: readonly Condition[]): CompiledEnvironment {
  const key = JSON.stringify(conditions);
  let env = compiled.get(key);
  if (!env) {
    env = compileEnvironment(
      [
        {
          key: KEY,
          type: 'boolean',
          targeting: {
            state: 'ENABLED',
            variants: { on: true, off: false },
            defaultVariant: 'off',
            prerequisites: [],
            rules: [{ id: 'route', name: 'route', enabled: true, conditions: [...conditions], segments: [], serve: { variant: 'on' } }],
          },
        },
      ],
      [],
    );
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, env);
  }
  return env;
}

/** The fields as an evaluation context: strings cut to the engine's longest, other values as they are. */
export function fieldContext(data: Record<string, unknown>): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(data)) {
    if (name === 'targetingKey') continue;
    context[name] = typeof value === 'string' ? value.slice(0, MAX_CONTEXT_STRING_LENGTH) : value;
  }
  return context;
}

/** True when every condition holds for the fields (no conditions: always). */
export function fieldsMeet(conditions: readonly Condition[] | undefined, data: Record<string, unknown>): boolean {
  if (!conditions || conditions.length === 0) return true;
  return environmentOf(conditions).evaluate(KEY, fieldContext(data))?.value === true;
}
