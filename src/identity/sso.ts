// The pure rules of single sign-on (docs/adr/0032-identity-and-sso.md), table-tested in sso.test.ts:
// which groups a provider's claims name, which role they give, and which member a signed-in identity is.
import { atLeast } from './access.ts';
import type { Role } from './actor.ts';

/** One group=role line of FLAGPOST_OIDC_ROLES; `*` is everyone the provider signs in. */
export interface RoleMapping {
  group: string;
  role: Role;
}

/**
 * The groups in `claims` under `claim`: a list of strings, or one string; a dotted path reaches into
 * objects (Keycloak's `realm_access.roles`). Anything else names no group.
 */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  let value: unknown = claims[claim];
  if (value === undefined && claim.includes('.')) {
    value = claim.split('.').reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), claims);
  }
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string') : [];
}

/** The highest role any of `groups` maps to; undefined when none is mapped (the sign-in is refused). */
export function roleOfGroups(groups: readonly string[], mappings: readonly RoleMapping[]): Role | undefined {
  let best: Role | undefined;
  for (const { group, role } of mappings) {
    if (group !== '*' && !groups.includes(group)) continue;
    if (!best || atLeast(role, best)) best = role;
  }
  return best;
}

/** What is known when an identity signs in. */
export interface SignInFacts {
  /** The member already linked to this issuer and subject. */
  linkedUserId: string | undefined;
  /** A member with the identity's e-mail address. */
  userWithEmail: { id: string; linked: boolean } | undefined;
  /** The provider vouches for the address (`email_verified: true`). */
  emailVerified: boolean;
  /** The address is the break-glass owner's (FLAGPOST_SSO_BREAK_GLASS_EMAIL). */
  breakGlass: boolean;
}

/**
 * Which member an identity is. Matched by issuer and subject; an unlinked member with the same address is
 * linked only when the provider verified the address, never otherwise (someone could register any
 * address at a provider). A taken address otherwise refuses the sign-in: an owner must sort it out. A
 * new member is made only from a verified address, and the break-glass owner's address is never linked
 * nor taken by an identity: that account must keep working when the provider does not (issue 29).
 */
export type SignInMatch =
  | { kind: 'linked'; userId: string }
  | { kind: 'link'; userId: string }
  | { kind: 'create' }
  | { kind: 'email-taken' }
  | { kind: 'email-unverified' }
  | { kind: 'break-glass' };

export function matchIdentity(facts: SignInFacts): SignInMatch {
  if (facts.linkedUserId) return { kind: 'linked', userId: facts.linkedUserId };
  if (facts.breakGlass) return { kind: 'break-glass' };
  if (!facts.userWithEmail) return facts.emailVerified ? { kind: 'create' } : { kind: 'email-unverified' };
  if (facts.emailVerified && !facts.userWithEmail.linked) return { kind: 'link', userId: facts.userWithEmail.id };
  return { kind: 'email-taken' };
}

/**
 * The role a signing-in member gets: the one their groups map to, except that the last owner stays an
 * owner (a changed group at the provider must not leave Flagpost without an owner; issue 29).
 */
export function roleAfterSignIn(current: Role, mapped: Role, owners: number): Role {
  return current === 'owner' && mapped !== 'owner' && owners <= 1 ? 'owner' : mapped;
}
