import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachDialect } from '../support/context.ts';

// Issue 20: FLAGPOST_SSO_ONLY turns passwords off except for the break-glass owner. The provider is not
// reached here: password sign-in and invitations never ask it.

const PASSWORD = 'a long test password 0123';

forEachDialect(
  'single sign-on only',
  (ctx) => {
    it('refuses password sign-in and invitations, except for the break-glass owner', async () => {
      assert.deepEqual((await ctx().app.inject({ method: 'GET', url: '/admin/v1/sso' })).json(), {
        enabled: true,
        name: 'Okta',
        passwordsOff: true,
        ownerExists: false,
      });
      for (const [email, role] of [
        ['root@example.com', 'owner'],
        ['ada@example.com', 'editor'],
      ] as const) {
        assert.equal((await ctx().admin('POST', '/admin/v1/users', { email, password: PASSWORD, role })).statusCode, 201);
      }
      const signIn = (email: string) => ctx().app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { email, password: PASSWORD } });
      const refused = await signIn('ada@example.com');
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().message, 'Password sign-in is off on this Flagpost: sign in with single sign-on');
      assert.equal((await signIn('ROOT@example.com')).statusCode, 201, 'the break-glass owner, whatever the letter case');

      const invited = await ctx().admin('POST', '/admin/v1/invitations', { email: 'new@example.com', role: 'viewer' });
      const accepted = await ctx().app.inject({
        method: 'POST',
        url: '/admin/v1/invitations/accept',
        payload: { token: invited.json().token, password: PASSWORD },
      });
      assert.equal(accepted.statusCode, 403);
      assert.equal(accepted.json().message, 'Password sign-in is off on this Flagpost: sign in with single sign-on');
    });
  },
  {
    FLAGPOST_OIDC_ISSUER: 'http://127.0.0.1:9/never-reached',
    FLAGPOST_OIDC_CLIENT_ID: 'flagpost',
    FLAGPOST_OIDC_CLIENT_SECRET: 'secret',
    FLAGPOST_OIDC_NAME: 'Okta',
    FLAGPOST_OIDC_ROLES: 'admins=owner',
    FLAGPOST_SSO_ONLY: 'true',
    FLAGPOST_SSO_BREAK_GLASS_EMAIL: 'root@example.com',
  },
);
