import type { EnvFlag } from '../api.ts';

// Basestack's /v1 has no user context: for a flag with rules it answers the default serve (the switch),
// while OpenFeature (OFREP) evaluates the rules for each user (docs/adr, issue 18). Said next to the switch.

/** True when the flag has something to evaluate against a user in this environment. */
export const isTargeted = (v: Pick<EnvFlag, 'rules' | 'prerequisites' | 'jsonLogic'>): boolean =>
  v.rules.some((r) => r.enabled) || v.prerequisites.length > 0 || (v.jsonLogic !== null && v.jsonLogic !== undefined);

export function V1Note({ value, id }: { value: EnvFlag; id?: string }) {
  if (!isTargeted(value)) return null;
  return (
    <p className="note" id={id} role="note">
      Has rules in {value.environment.name}: <code>/v1</code> (Basestack SDK) has no user context, so it answers this switch, the default serve. OpenFeature
      (OFREP) evaluates the rules for each user.
    </p>
  );
}
