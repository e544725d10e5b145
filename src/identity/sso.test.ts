import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { returnPath } from '../http/return-path.ts';
import { groupsOf, matchIdentity, roleAfterSignIn, type RoleMapping, roleOfGroups, type SignInFacts, type SignInMatch } from './sso.ts';

describe('single sign-on rules (ADR 0032)', () => {
  const mappings: RoleMapping[] = [
    { group: 'flagpost-admins', role: 'owner' },
    { group: 'engineering', role: 'editor' },
    { group: 'support', role: 'viewer' },
  ];
  const roles: Array<[string, string[], RoleMapping[], string | undefined]> = [
    ['gives the role of the one mapped group', ['engineering'], mappings, 'editor'],
    ['gives the highest role of several groups', ['support', 'flagpost-admins', 'engineering'], mappings, 'owner'],
    ['refuses a member of no mapped group', ['marketing'], mappings, undefined],
    ['refuses a member of no group at all', [], mappings, undefined],
    ['gives everyone the role of `*`', ['marketing'], [...mappings, { group: '*', role: 'viewer' }], 'viewer'],
    ['prefers a higher mapped group over `*`', ['engineering'], [{ group: '*', role: 'viewer' }, ...mappings], 'editor'],
    ['matches group names exactly (case counts)', ['Engineering'], mappings, undefined],
  ];
  for (const [name, groups, map, expected] of roles) it(name, () => assert.equal(roleOfGroups(groups, map), expected));

  const claims: Array<[string, Record<string, unknown>, string, string[]]> = [
    ['reads a list of groups', { groups: ['a', 'b'] }, 'groups', ['a', 'b']],
    ['reads one group given as a string', { groups: 'a' }, 'groups', ['a']],
    ['ignores what is not a string', { groups: ['a', 1, null, { x: 1 }] }, 'groups', ['a']],
    ['reads a dotted path into objects', { realm_access: { roles: ['x'] } }, 'realm_access.roles', ['x']],
    ['prefers a claim named with a dot over the path', { 'a.b': ['flat'], a: { b: ['deep'] } }, 'a.b', ['flat']],
    ['names no group for a missing claim', {}, 'groups', []],
  ];
  for (const [name, given, claim, expected] of claims) it(name, () => assert.deepEqual(groupsOf(given, claim), expected));

  const matches: Array<[string, SignInFacts, SignInMatch]> = [
    [
      'uses the member linked to the subject',
      { linkedUserId: 'u1', userWithEmail: { id: 'u2', linked: false }, emailVerified: true, breakGlass: false },
      { kind: 'linked', userId: 'u1' },
    ],
    [
      'creates a member for a new subject and a verified address',
      { linkedUserId: undefined, userWithEmail: undefined, emailVerified: true, breakGlass: false },
      { kind: 'create' },
    ],
    [
      'never creates a member from an unverified address',
      { linkedUserId: undefined, userWithEmail: undefined, emailVerified: false, breakGlass: false },
      { kind: 'email-unverified' },
    ],
    [
      'never links the break-glass owner, even by a verified address',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: false }, emailVerified: true, breakGlass: true },
      { kind: 'break-glass' },
    ],
    [
      'never creates a member with the break-glass address',
      { linkedUserId: undefined, userWithEmail: undefined, emailVerified: true, breakGlass: true },
      { kind: 'break-glass' },
    ],
    [
      'links an unlinked member by a verified address',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: false }, emailVerified: true, breakGlass: false },
      { kind: 'link', userId: 'u2' },
    ],
    [
      'never links by an unverified address',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: false }, emailVerified: false, breakGlass: false },
      { kind: 'email-taken' },
    ],
    [
      'never takes over a member linked to another subject',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: true }, emailVerified: true, breakGlass: false },
      { kind: 'email-taken' },
    ],
  ];
  for (const [name, facts, expected] of matches) it(name, () => assert.deepEqual(matchIdentity(facts), expected));

  const roleChanges: Array<[string, 'owner' | 'editor' | 'viewer', 'owner' | 'editor' | 'viewer', number, string]> = [
    ['applies a mapped demotion while other owners remain', 'owner', 'viewer', 2, 'viewer'],
    ['never demotes the last owner', 'owner', 'viewer', 1, 'owner'],
    ['promotes whatever the number of owners', 'viewer', 'owner', 1, 'owner'],
    ['changes a non-owner freely', 'editor', 'viewer', 1, 'viewer'],
  ];
  for (const [name, current, mapped, owners, expected] of roleChanges) it(name, () => assert.equal(roleAfterSignIn(current, mapped, owners), expected));

  const PUBLIC = 'https://flags.example.test';
  const paths: Array<[string, string | undefined, string]> = [
    ['keeps a dashboard path with its query and fragment', '/projects/web?tab=flags#x', '/projects/web?tab=flags#x'],
    ['refuses a protocol-relative URL', '//evil.example/x', '/projects'],
    ['refuses an absolute URL', 'https://evil.example', '/projects'],
    ['refuses a backslash', '/\\evil.example', '/projects'],
    ['refuses a tab that a browser would strip', '/\t/evil.example/', '/projects'],
    ['refuses a carriage return', '/\r/evil.example/', '/projects'],
    ['refuses a line feed', '/\n/evil.example/', '/projects'],
    ['refuses a space', '/ /evil.example/', '/projects'],
    ['refuses a no-break space', '/\u00a0/evil.example/', '/projects'],
    ['refuses a NUL', '/\u0000/evil.example/', '/projects'],
    ['refuses a zero-width character', '/\u200b/evil.example/', '/projects'],
    ['normalizes dot segments on the same origin', '/a/../projects', '/projects'],
    ['goes to /projects without next', undefined, '/projects'],
  ];
  for (const [name, next, expected] of paths) it(`return path: ${name}`, () => assert.equal(returnPath(next, PUBLIC), expected));
});
