import { BOOLEAN_VARIANTS, type FlagTargeting, type FlagType, type Variants } from '../targeting/targeting.ts';

// How today's switch (`enabled`, what /v1 answers) and a flag's targeting relate (docs/adr/0025).
// For a boolean flag the switch is the default serve: on when the flag is ENABLED and its default variant
// is true. For string, number and object flags the switch is flagd's state. Pure; table-tested beside.

/** The /v1 switch of a flag with this targeting. */
export function enabledOf(type: FlagType, targeting: Pick<FlagTargeting, 'state' | 'variants' | 'defaultVariant'>): boolean {
  if (targeting.state !== 'ENABLED') return false;
  if (type !== 'boolean') return true;
  return targeting.defaultVariant !== null && targeting.variants[targeting.defaultVariant] === true;
}

/**
 * The variant of a boolean flag whose value is `value`: the standard `on`/`off` when they carry it,
 * otherwise the first (in the definition's order) that does; undefined when none does.
 */
export function booleanVariantFor(variants: Variants, value: boolean): string | undefined {
  const standard = value ? 'on' : 'off';
  if (variants[standard] === value) return standard;
  return Object.keys(variants).find((name) => variants[name] === value);
}

/**
 * Targeting after the /v1 switch is set: a boolean flag serves the variant with that value by default
 * (and is ENABLED when switched on, so that the switch shows what it says); any other flag is ENABLED
 * or DISABLED. Undefined when a boolean flag has no variant with that value.
 */
export function switchTargeting(type: FlagType, targeting: FlagTargeting, enabled: boolean): FlagTargeting | undefined {
  if (type !== 'boolean') return { ...targeting, state: enabled ? 'ENABLED' : 'DISABLED' };
  const variant = booleanVariantFor(targeting.variants, enabled);
  if (variant === undefined) return undefined;
  return { ...targeting, defaultVariant: variant, state: enabled ? 'ENABLED' : targeting.state };
}

/** The targeting of a flag created without any: a boolean flag is its switch over the standard variants. */
export function initialTargeting(enabled: boolean): FlagTargeting {
  return { state: 'ENABLED', variants: { ...BOOLEAN_VARIANTS }, defaultVariant: enabled ? 'on' : 'off', prerequisites: [], rules: [] };
}

/**
 * What a flag serves in an environment that has not chosen anything yet (a new environment, or the other
 * environments of a flag imported into one): the same variants, no rules, and nothing switched on: a
 * boolean flag serves its false variant, any other flag is DISABLED (the caller's default applies).
 */
export function safeTargeting(type: FlagType, variants: Variants, defaultVariant: string | null): FlagTargeting {
  const base = { variants, prerequisites: [], rules: [] };
  if (type === 'boolean') {
    const off = booleanVariantFor(variants, false);
    return off === undefined ? { ...base, state: 'DISABLED', defaultVariant } : { ...base, state: 'ENABLED', defaultVariant: off };
  }
  return { ...base, state: 'DISABLED', defaultVariant };
}
