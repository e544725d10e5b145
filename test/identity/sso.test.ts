import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import type { BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../dashboard/build.ts';
import { chromiumMissing, launchChromium } from '../support/browser.ts';
import { createTestContext, dialects, type TestContext } from '../support/context.ts';
import { freePort } from '../support/process.ts';

// Issue 20, single sign-on: the dashboard in Chromium against a real OpenID provider (oidc-provider)
// run here on loopback. Sign in through the provider, the role from a group, a member of no mapped group
// refused, a forged and a replayed callback refused, a changed group applied at the next sign-in, and
// sign-out offering the provider's logout. Both engines.

const WEB_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-sso-dashboard-'));
const CLIENT_ID = 'flagpost';
const CLIENT_SECRET = 'a-client-secret-of-the-test-provider-0123456789';

/** The provider's members and their groups; a test changes them between sign-ins. */
const groups: Record<string, string[]> = {};
/** Members whose address the provider does not vouch for (`email_verified: false`). */
const unverified = new Set<string>();

async function startProvider(base: string): Promise<{ issuer: string; server: Server }> {
  const port = freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${base}/admin/v1/sso/callback`],
        post_logout_redirect_uris: [`${base}/sign-in`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'email', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    async findAccount(_ctx, id) {
      return { accountId: id, claims: async () => ({ sub: id, email: `${id}@example.com`, email_verified: !unverified.has(id), groups: groups[id] ?? [] }) };
    },
    // The members consent once for all: no consent page between the login form and Flagpost.
    async loadExistingGrant(ctx) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email groups');
      await grant.save();
      return grant;
    },
  });
  const server = provider.listen(port, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return { issuer, server };
}

for (const dialect of dialects()) {
  describe(`single sign-on with an OpenID provider, in Chromium [${dialect}]`, { skip: chromiumMissing }, () => {
    let ctx: TestContext;
    let base: string;
    let issuer: string;
    let idp: Server;
    let browser: BrowserContext;

    before(async () => {
      if (!fs.existsSync(path.join(WEB_DIR, 'index.html'))) await buildDashboard(WEB_DIR);
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      ({ issuer, server: idp } = await startProvider(base));
      ctx = await createTestContext(dialect, {
        FLAGPOST_PUBLIC_URL: base,
        FLAGPOST_DASHBOARD_DIR: WEB_DIR,
        FLAGPOST_OIDC_ISSUER: issuer,
        FLAGPOST_OIDC_CLIENT_ID: CLIENT_ID,
        FLAGPOST_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        FLAGPOST_OIDC_NAME: 'Example IdP',
        FLAGPOST_OIDC_SCOPES: 'openid email groups',
        FLAGPOST_OIDC_ROLES: 'flagpost-admins=owner,engineering=editor,support=viewer',
      });
      await ctx.app.listen({ port, host: '127.0.0.1' });
      browser = await launchChromium();
      // Loopback only: the provider's pages link a web font, which is refused here.
      await browser.route('**/*', (route) => (/^http:\/\/127\.0\.0\.1:/.test(route.request().url()) ? route.continue() : route.abort()));
    });
    after(async () => {
      await browser?.close();
      await ctx?.close();
      idp?.close();
    });

    const session = async (page: Page) =>
      page.evaluate(async () => {
        const res = await fetch('/admin/v1/sessions/current');
        return { status: res.status, body: (await res.json()) as { role?: string; user?: { email: string } | null } };
      });

    /** From the sign-in page through the provider's login form; answers the page where it ends. */
    async function signInAs(login: string): Promise<Page> {
      const page = await browser.newPage();
      await page.goto(`${base}/projects`);
      await page.getByRole('button', { name: 'Sign in with Example IdP' }).click();
      await page.waitForURL(`${issuer}/**`);
      await page.locator('input[name=login]').fill(login);
      await page.locator('input[name=password]').fill('any password');
      await page.locator('button[type=submit]').click();
      await page.waitForURL(`${base}/**`);
      return page;
    }

    it('tells the sign-in page about single sign-on', async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/admin/v1/sso' });
      assert.deepEqual(res.json(), { enabled: true, name: 'Example IdP', passwordsOff: false, ownerExists: false });
    });

    it('signs a new member in with the role of their group, and applies a changed group at the next sign-in', { timeout: 120_000 }, async () => {
      groups.alice = ['engineering'];
      const page = await signInAs('alice');
      await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      assert.deepEqual((await session(page)).body.role, 'editor');
      assert.equal((await session(page)).body.user?.email, 'alice@example.com');
      const members = (await ctx.admin('GET', '/admin/v1/users')).json().users as Array<{ email: string; role: string }>;
      assert.deepEqual(
        members.map((m) => [m.email, m.role]),
        [['alice@example.com', 'editor']],
      );

      // Sign-out ends the session and goes on to the provider's logout.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${issuer}/session/end**`);
      assert.equal((await fetch(`${base}/admin/v1/sessions/current`)).status, 401);
      await page.close();
      await browser.clearCookies();

      groups.alice = ['support'];
      const again = await signInAs('alice');
      await again.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      assert.equal((await session(again)).body.role, 'viewer');
      const after = (await ctx.admin('GET', '/admin/v1/users')).json().users as Array<{ email: string; role: string }>;
      assert.deepEqual(
        after.map((m) => [m.email, m.role]),
        [['alice@example.com', 'viewer']],
        'the same member, matched by subject, with the new role',
      );
      await again.close();
      await browser.clearCookies();
    });

    it('refuses a member of no mapped group', { timeout: 60_000 }, async () => {
      groups.bob = ['marketing'];
      const page = await signInAs('bob');
      await page.getByText('is in no group that has a role in Flagpost').waitFor();
      assert.equal((await session(page)).status, 401);
      const members = (await ctx.admin('GET', '/admin/v1/users')).json().users as Array<{ email: string }>;
      assert.ok(!members.some((m) => m.email === 'bob@example.com'), 'no account is made');
      await page.close();
      await browser.clearCookies();
    });

    it('never takes over a member by an address the provider does not vouch for', { timeout: 60_000 }, async () => {
      const dave = await ctx.admin('POST', '/admin/v1/users', { email: 'dave@example.com', password: 'a long test password 0123', role: 'owner' });
      assert.equal(dave.statusCode, 201);
      groups.dave = ['support'];
      unverified.add('dave');
      const page = await signInAs('dave');
      await page.getByText('A member with this e-mail address exists and is not linked to this identity').waitFor();
      assert.equal((await session(page)).status, 401);
      const members = (await ctx.admin('GET', '/admin/v1/users')).json().users as Array<{ email: string; role: string }>;
      assert.deepEqual(
        members.filter((m) => m.email === 'dave@example.com').map((m) => m.role),
        ['owner'],
        'the member keeps their role: the identity was not linked',
      );
      await page.close();
      await browser.clearCookies();
    });

    it('refuses a forged callback and a replayed one', { timeout: 60_000 }, async () => {
      groups.carol = ['flagpost-admins'];
      // Made up: no sign-in of this state was started.
      const made = await ctx.app.inject({ method: 'GET', url: '/admin/v1/sso/callback?code=made-up&state=made-up' });
      assert.equal(made.statusCode, 401);
      assert.match(made.json().message, /Single sign-on failed/);

      // A real sign-in, answered with a forged code for its state before the provider's redirect comes.
      const page = await browser.newPage();
      let state = '';
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.origin === issuer && url.searchParams.has('state')) state = url.searchParams.get('state')!;
      });
      await page.goto(`${base}/sign-in`);
      await page.getByRole('button', { name: 'Sign in with Example IdP' }).click();
      await page.locator('input[name=login]').waitFor();
      assert.ok(state, 'the authorization request carries a state');
      const interaction = page.url();
      const forged = await page.goto(`${base}/admin/v1/sso/callback?code=forged-code&state=${encodeURIComponent(state)}`);
      assert.equal(forged?.status(), 401, 'a forged code is refused');
      // The state was used up by the forged attempt: the provider's genuine redirect is now a replay.
      await page.goto(interaction);
      await page.locator('input[name=login]').fill('carol');
      await page.locator('input[name=password]').fill('any password');
      const [replayed] = await Promise.all([
        page.waitForResponse((r) => r.url().startsWith(`${base}/admin/v1/sso/callback`)),
        page.locator('button[type=submit]').click(),
      ]);
      assert.equal(replayed.status(), 401, 'a used state is refused');
      assert.equal((await session(page)).status, 401);
      await page.close();
      await browser.clearCookies();

      // A genuine callback works once, and its replay is refused even in the same browser.
      const fresh = await browser.newPage();
      let used = '';
      fresh.on('request', (request) => {
        if (request.url().startsWith(`${base}/admin/v1/sso/callback`)) used = request.url();
      });
      await fresh.goto(`${base}/sign-in`);
      await fresh.getByRole('button', { name: 'Sign in with Example IdP' }).click();
      await fresh.locator('input[name=login]').fill('carol');
      await fresh.locator('input[name=password]').fill('any password');
      await fresh.locator('button[type=submit]').click();
      await fresh.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
      assert.equal((await session(fresh)).body.role, 'owner');
      const replay = await fresh.goto(used);
      assert.equal(replay?.status(), 401, 'a replayed callback is refused');
      await fresh.close();
      await browser.clearCookies();
    });
  });
}
