import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Access, accessOf, needsViewerSetting, type Refusal, refusalOf } from './access.ts';
import type { Actor, Role } from './actor.ts';

const who = (type: Actor['type'], role: Role) => ({ actor: { type, id: type === 'admin_token' ? null : 'u1', label: 'x' }, role });

describe('which principal may call a route of which access (ADR 0021)', () => {
  const cases: Array<[string, Access, ReturnType<typeof who>, boolean, Refusal | undefined]> = [
    ['lets any credential through `any`', 'any', who('access_token', 'viewer'), false, undefined],
    ['lets a viewer read', 'viewer', who('user', 'viewer'), false, undefined],
    ['refuses a viewer a write', 'editor', who('user', 'viewer'), false, 'roleForbidden'],
    ['lets an editor write', 'editor', who('access_token', 'editor'), false, undefined],
    ['refuses an editor an owner route', 'owner', who('user', 'editor'), false, 'roleForbidden'],
    ['lets the admin token act as an owner', 'owner', who('admin_token', 'owner'), false, undefined],
    ['refuses the admin token a route for users', 'user', who('admin_token', 'owner'), false, 'needsUser'],
    ['lets an access token through a route for users', 'user', who('access_token', 'viewer'), false, undefined],
    ['refuses an access token a route for sessions', 'session', who('access_token', 'owner'), false, 'needsSession'],
    ['refuses the admin token a route for sessions as needing a user', 'session', who('admin_token', 'owner'), false, 'needsUser'],
    ['lets a signed-in user through a route for sessions', 'session', who('user', 'viewer'), false, undefined],
    ['refuses an owner a route for the admin token', 'admin_token', who('user', 'owner'), false, 'needsAdminToken'],
    ['lets the admin token through its own route', 'admin_token', who('admin_token', 'owner'), false, undefined],
    ['lets editors read submissions', 'submissions', who('user', 'editor'), false, undefined],
    ['refuses viewers submissions by default', 'submissions', who('user', 'viewer'), false, 'roleForbidden'],
    ['lets viewers read submissions when owners allow it', 'submissions', who('access_token', 'viewer'), true, undefined],
  ];
  for (const [name, access, principal, viewersSee, expected] of cases) {
    it(name, () => assert.equal(refusalOf(access, principal, viewersSee), expected));
  }

  it('requires viewer for reads and editor for writes unless the route says otherwise', () => {
    assert.equal(accessOf('GET', undefined), 'viewer');
    assert.equal(accessOf('HEAD', undefined), 'viewer');
    assert.equal(accessOf('POST', undefined), 'editor');
    assert.equal(accessOf('DELETE', undefined), 'editor');
    assert.equal(accessOf('POST', 'owner'), 'owner');
    assert.equal(accessOf('GET', 'any'), 'any');
  });

  it('reads the owners’ setting only for a viewer on a submissions route', () => {
    assert.equal(needsViewerSetting('submissions', 'viewer'), true);
    assert.equal(needsViewerSetting('submissions', 'editor'), false);
    assert.equal(needsViewerSetting('viewer', 'viewer'), false);
  });
});
