import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Access, accessOf, levelOn, needsViewerSetting, type ProjectRole, type Refusal, refusalOf, roleOfLevel } from './access.ts';
import type { Actor, Role } from './actor.ts';

const as = (type: Actor['type']) => ({ actor: { type, id: type === 'admin_token' ? null : 'u1', label: 'x' } });

describe('which principal may call a route of which access (ADR 0021, 0033)', () => {
  // [name, access, actor type, instance role, project role, project route, viewers see submissions, expected]
  const cases: Array<[string, Access, Actor['type'], Role, ProjectRole | undefined, boolean, boolean, Refusal | undefined]> = [
    ['lets any credential through `any`', 'any', 'access_token', 'none', undefined, false, false, undefined],
    ['lets a viewer read', 'viewer', 'user', 'viewer', undefined, false, false, undefined],
    ['refuses a viewer a write', 'editor', 'user', 'viewer', undefined, false, false, 'roleForbidden'],
    ['lets an editor write', 'editor', 'access_token', 'editor', undefined, false, false, undefined],
    ['refuses an editor an owner route', 'owner', 'user', 'editor', undefined, false, false, 'roleForbidden'],
    ['lets the admin token act as an owner', 'owner', 'admin_token', 'owner', undefined, false, false, undefined],
    ['refuses the admin token a route for users', 'user', 'admin_token', 'owner', undefined, false, false, 'needsUser'],
    ['lets an access token through a route for users', 'user', 'access_token', 'viewer', undefined, false, false, undefined],
    ['refuses an access token a route for sessions', 'session', 'access_token', 'owner', undefined, false, false, 'needsSession'],
    ['refuses the admin token a route for sessions as needing a user', 'session', 'admin_token', 'owner', undefined, false, false, 'needsUser'],
    ['lets a signed-in user through a route for sessions', 'session', 'user', 'viewer', undefined, false, false, undefined],
    ['refuses an owner a route for the admin token', 'admin_token', 'user', 'owner', undefined, false, false, 'needsAdminToken'],
    ['lets editors read submissions', 'submissions', 'user', 'editor', undefined, false, false, undefined],
    ['refuses viewers submissions by default', 'submissions', 'user', 'viewer', undefined, false, false, 'roleForbidden'],
    ['lets viewers read submissions when owners allow it', 'submissions', 'access_token', 'viewer', undefined, false, true, undefined],
    ['lets an instance editor manage a project', 'project_admin', 'user', 'editor', undefined, true, false, undefined],
    ['refuses a member without instance role an instance route', 'viewer', 'user', 'none', undefined, false, false, 'roleForbidden'],
    ['hides a project from a member with no role on it', 'viewer', 'user', 'none', undefined, true, false, 'hidden'],
    ['hides it for writes too (404 before 403)', 'editor', 'user', 'none', undefined, true, false, 'hidden'],
    ['lets a project viewer read their project', 'viewer', 'user', 'none', 'viewer', true, false, undefined],
    ['refuses a project viewer a write', 'editor', 'user', 'none', 'viewer', true, false, 'roleForbidden'],
    ['lets a project editor write flags', 'editor', 'access_token', 'none', 'editor', true, false, undefined],
    ['refuses a project editor environments and keys', 'project_admin', 'user', 'none', 'editor', true, false, 'roleForbidden'],
    ['lets a project admin manage environments and keys', 'project_admin', 'user', 'none', 'admin', true, false, undefined],
    ['never makes a project admin an owner', 'owner', 'user', 'none', 'admin', true, false, 'roleForbidden'],
    ['raises an instance viewer on a project they edit', 'editor', 'user', 'viewer', 'editor', true, false, undefined],
    ['never lowers an instance editor on a project they only view', 'editor', 'user', 'editor', 'viewer', true, false, undefined],
    ['lets a project viewer read submissions when owners allow it', 'submissions', 'user', 'none', 'viewer', true, true, undefined],
    ['lets a project editor read submissions', 'submissions', 'user', 'none', 'editor', true, false, undefined],
  ];
  for (const [name, access, type, role, projectRole, scoped, viewersSee, expected] of cases) {
    it(name, () => assert.equal(refusalOf(access, as(type), scoped ? levelOn(role, projectRole) : levelOn(role, undefined), scoped, viewersSee), expected));
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
    assert.equal(needsViewerSetting('submissions', levelOn('viewer', undefined)), true);
    assert.equal(needsViewerSetting('submissions', levelOn('none', 'viewer')), true);
    assert.equal(needsViewerSetting('submissions', levelOn('editor', undefined)), false);
    assert.equal(needsViewerSetting('viewer', levelOn('viewer', undefined)), false);
  });

  it('reads a level as the role that redaction and answers use', () => {
    assert.deepEqual(
      [levelOn('none', undefined), levelOn('none', 'viewer'), levelOn('none', 'editor'), levelOn('none', 'admin'), levelOn('owner', undefined)].map(
        roleOfLevel,
      ),
      ['none', 'viewer', 'editor', 'editor', 'owner'],
    );
  });
});
