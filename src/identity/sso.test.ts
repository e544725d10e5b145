import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupsOf, matchIdentity, returnPath, type RoleMapping, roleOfGroups, type SignInFacts, type SignInMatch } from './sso.ts';

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
      { linkedUserId: 'u1', userWithEmail: { id: 'u2', linked: false }, emailVerified: true },
      { kind: 'linked', userId: 'u1' },
    ],
    ['creates a member for a new subject and address', { linkedUserId: undefined, userWithEmail: undefined, emailVerified: false }, { kind: 'create' }],
    [
      'links an unlinked member by a verified address',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: false }, emailVerified: true },
      { kind: 'link', userId: 'u2' },
    ],
    [
      'never links by an unverified address',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: false }, emailVerified: false },
      { kind: 'email-taken' },
    ],
    [
      'never takes over a member linked to another subject',
      { linkedUserId: undefined, userWithEmail: { id: 'u2', linked: true }, emailVerified: true },
      { kind: 'email-taken' },
    ],
  ];
  for (const [name, facts, expected] of matches) it(name, () => assert.deepEqual(matchIdentity(facts), expected));

  it('returns only to the dashboard’s own paths', () => {
    assert.equal(returnPath('/projects/web'), '/projects/web');
    assert.equal(returnPath('//evil.example/x'), '/projects');
    assert.equal(returnPath('https://evil.example'), '/projects');
    assert.equal(returnPath('/\\evil.example'), '/projects');
    assert.equal(returnPath(undefined), '/projects');
  });
});
