import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import Provider from 'oidc-provider';
import pino from 'pino';
import { buildApp } from '../../src/app.ts';
import { compose, type Services } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import { openDb } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { ADMIN_TOKEN, createTestDatabase, dialects, TEST_SCRYPT_COST, type TestDatabase } from '../support/context.ts';
import { freePort } from '../support/process.ts';

// Issue 29, the edges of single sign-on (items 5, 6, 11, 12 and the log part of 15), against a real
// OpenID provider (oidc-provider) on loopback, driven over HTTP without a browser: where a sign-in
// returns to, the break-glass owner and the last owner, unverified addresses, the throttled start, and
// the callback's code and state kept out of the request log. Both engines.

const CLIENT_ID = 'flagpost';
const CLIENT_SECRET = 'a-client-secret-of-the-test-provider-0123456789';
const PASSWORD = 'a long test password 0123';

/** The provider's members: their groups, and those whose address it does not vouch for. */
const groups: Record<string, string[]> = {};
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
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'email', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      return { accountId: id, claims: async () => ({ sub: id, email: `${id}@example.com`, email_verified: !unverified.has(id), groups: groups[id] ?? [] }) };
    },
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

/** The cookies of one site, sent on every request to it (enough for these few paths). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1);
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

for (const dialect of dialects()) {
  describe(`single sign-on edges (issue 29) [${dialect}]`, () => {
    let database: TestDatabase;
    let services: Services;
    let app: Awaited<ReturnType<typeof buildApp>>;
    let base: string;
    let idp: Server;
    const logLines: string[] = [];

    before(async () => {
      const port = freePort();
      base = `http://127.0.0.1:${port}`;
      const started = await startProvider(base);
      idp = started.server;
      database = await createTestDatabase(dialect);
      const config = loadConfig({
        FLAGPOST_ADMIN_TOKEN: ADMIN_TOKEN,
        LOG_LEVEL: 'info',
        ...database.env,
        FLAGPOST_PUBLIC_URL: base,
        FLAGPOST_OIDC_ISSUER: started.issuer,
        FLAGPOST_OIDC_CLIENT_ID: CLIENT_ID,
        FLAGPOST_OIDC_CLIENT_SECRET: CLIENT_SECRET,
        FLAGPOST_OIDC_SCOPES: 'openid email groups',
        FLAGPOST_OIDC_ROLES: 'flagpost-admins=owner,engineering=editor,support=viewer',
        FLAGPOST_SSO_BREAK_GLASS_EMAIL: 'root@example.com',
        FLAGPOST_SSO_STARTS_PER_CLIENT: '40',
        FLAGPOST_SSO_MAX_PENDING: '60',
      });
      const handle = openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 4 });
      await migrateToLatest(handle.db);
      // The process's own logger, written here: the request log is what the last test reads.
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          logLines.push(chunk.toString());
          done();
        },
      });
      services = await compose(config, handle, { scryptCost: TEST_SCRYPT_COST, log: pino({ level: 'info' }, sink) });
      app = await buildApp(services);
      await app.listen({ port, host: '127.0.0.1' });
    });
    after(async () => {
      await app?.close();
      await services?.stop();
      await database?.drop();
      idp?.close();
    });

    const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
      app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    const members = async () => ((await admin('GET', '/admin/v1/users')).json().users as Array<{ email: string; role: string }>).map((m) => [m.email, m.role]);

    /**
     * Starts a sign-in from a client address (`x-forwarded-for` is not trusted: every start here counts
     * against 127.0.0.1), signs `login` in at the provider, and answers Flagpost's callback response.
     */
    async function signIn(login: string, next?: string): Promise<Response> {
      const flagpost = new CookieJar();
      const provider = new CookieJar();
      const start = await fetch(`${base}/admin/v1/sso/start${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`, { redirect: 'manual' });
      assert.equal(start.status, 302, await start.clone().text());
      flagpost.take(start);
      let url = start.headers.get('location')!;
      for (let hops = 0; !url.startsWith(base); hops++) {
        assert.ok(hops < 12, `the provider keeps redirecting: ${url}`);
        let res = await fetch(url, { redirect: 'manual', headers: { cookie: provider.header } });
        provider.take(res);
        if (res.status === 200) {
          const action = /action="([^"]+)"/.exec(await res.text())?.[1];
          assert.ok(action, 'the provider shows its login form');
          res = await fetch(new URL(action, url), {
            method: 'POST',
            redirect: 'manual',
            headers: { cookie: provider.header, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ prompt: 'login', login, password: 'any password' }),
          });
          provider.take(res);
        }
        url = new URL(res.headers.get('location')!, url).href;
      }
      return fetch(url, { redirect: 'manual', headers: { cookie: flagpost.header } });
    }

    it('returns only to a same-origin path: a tab, CR or LF in next goes to /projects', async () => {
      groups.erin = ['engineering'];
      const kept = await signIn('erin', '/projects/web?tab=flags');
      assert.equal(kept.status, 200);
      assert.match(await kept.text(), /url=\/projects\/web\?tab=flags"/);
      for (const next of ['/\t/evil.example/', '/\r/evil.example/', '/\n/evil.example/', '//evil.example/', '/ /evil.example']) {
        const res = await signIn('erin', next);
        assert.equal(res.status, 200);
        const page = await res.text();
        assert.match(page, /content="0;url=\/projects"/, `next ${JSON.stringify(next)}`);
        assert.doesNotMatch(page, /evil/);
      }
    });

    it('never makes a member from an address the provider does not vouch for', async () => {
      groups.frank = ['flagpost-admins'];
      unverified.add('frank');
      const res = await signIn('frank');
      assert.equal(res.status, 403);
      assert.equal((await res.json()).message, 'The identity provider has not verified the e-mail address of your account');
      assert.ok(!(await members()).some(([email]) => email === 'frank@example.com'), 'no account is made');
    });

    it('never links the break-glass owner, whose password keeps working', async () => {
      assert.equal((await admin('POST', '/admin/v1/users', { email: 'root@example.com', password: PASSWORD, role: 'owner' })).statusCode, 201);
      groups.root = ['support'];
      const res = await signIn('root');
      assert.equal(res.status, 403);
      assert.equal((await res.json()).message, 'The break-glass owner signs in with a password, never with single sign-on');
      assert.deepEqual(
        (await members()).filter(([email]) => email === 'root@example.com'),
        [['root@example.com', 'owner']],
        'neither linked nor demoted',
      );
      const password = await app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { email: 'root@example.com', password: PASSWORD } });
      assert.equal(password.statusCode, 201);
    });

    it('never demotes the last owner through group mapping, and demotes an owner when another remains', async () => {
      // root@ (the break-glass owner) is made a viewer, so that gina is the one owner.
      const root = ((await admin('GET', '/admin/v1/users')).json().users as Array<{ id: string; email: string }>).find((m) => m.email === 'root@example.com')!;
      groups.gina = ['flagpost-admins'];
      assert.equal((await signIn('gina')).status, 200);
      assert.equal((await admin('PATCH', `/admin/v1/users/${root.id}`, { role: 'viewer' })).statusCode, 200);
      assert.deepEqual(
        (await members()).filter(([, role]) => role === 'owner'),
        [['gina@example.com', 'owner']],
      );

      groups.gina = ['support'];
      assert.equal((await signIn('gina')).status, 200);
      assert.deepEqual(
        (await members()).filter(([, role]) => role === 'owner'),
        [['gina@example.com', 'owner']],
        'the only owner stays one',
      );

      groups.hank = ['flagpost-admins'];
      assert.equal((await signIn('hank')).status, 200);
      assert.equal((await signIn('gina')).status, 200);
      assert.deepEqual(
        (await members()).filter(([email]) => email === 'gina@example.com'),
        [['gina@example.com', 'viewer']],
        'with another owner, the mapped role applies',
      );
    });

    it('keeps the callback’s code and state out of the request log', async () => {
      groups.ivan = ['engineering'];
      const res = await signIn('ivan');
      assert.equal(res.status, 200);
      const callbackUrl = new URL(res.url);
      const code = callbackUrl.searchParams.get('code')!;
      const state = callbackUrl.searchParams.get('state')!;
      assert.ok(code && state);
      const log = logLines.join('');
      assert.match(log, /\/admin\/v1\/sso\/callback\?code=\[redacted\]&state=\[redacted\]/);
      assert.ok(!log.includes(code), 'no authorization code in the log');
      assert.ok(!log.includes(state), 'no state in the log');
    });

    it('throttles starts per client and caps the sign-ins under way', async () => {
      const start = (address: string) => app.inject({ method: 'GET', url: '/admin/v1/sso/start', remoteAddress: address });
      const openLogins = async () =>
        Number(
          (
            await services.handle.db
              .selectFrom('sso_logins')
              .select((eb) => eb.fn.countAll<string | number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      // 40 starts per client key within the sign-in lifetime, then 429 with Retry-After.
      for (let i = 0; i < 40; i++) assert.equal((await start('127.0.0.9')).statusCode, 302);
      const limited = await start('127.0.0.9');
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal(limited.json().message, 'Too many requests, please try again later.');
      // 60 sign-ins under way at most over all clients, then 503 with Retry-After: no row is added.
      let refused;
      for (let i = 10; i < 100 && !refused; i++) {
        const res = await start(`127.0.1.${i}`);
        if (res.statusCode === 503) refused = res;
        else assert.equal(res.statusCode, 302);
      }
      assert.ok(refused, 'starts are refused once 60 sign-ins are under way');
      assert.equal(refused.json().message, 'Too many single sign-ons are under way: try again in a minute');
      assert.ok(Number(refused.headers['retry-after']) > 0);
      const rows = await openLogins();
      assert.ok(rows <= 60, `${rows} sign-ins under way`);
      assert.equal((await start('127.0.1.200')).statusCode, 503);
      assert.equal(await openLogins(), rows, 'a refused start writes nothing');
    });
  });
}
