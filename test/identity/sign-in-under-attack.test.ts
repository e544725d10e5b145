import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestDatabase, dialects, forEachDialect, startInstance, type TestContext } from '../support/context.ts';

// Issue 20, "Fix first" 1 and 2: sign-in limits that hold under any concurrency, on every instance,
// and a bound on the password work one process does at once (docs/adr/0022-sign-in-under-attack.md).

const PASSWORD = 'correct horse battery staple';
const cookieOf = (res: LightMyRequestResponse) => res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');
const statuses = (answers: LightMyRequestResponse[]) => {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.statusCode] = (counts[a.statusCode] ?? 0) + 1;
  return counts;
};

function signIn(ctx: Pick<TestContext, 'app'>, email: string, password: string, remoteAddress: string) {
  return ctx.app.inject({ method: 'POST', url: '/admin/v1/sessions', remoteAddress, payload: { email, password } });
}

async function createUser(ctx: TestContext, email: string, role = 'owner') {
  const res = await ctx.admin('POST', '/admin/v1/users', { email, password: PASSWORD, role });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string };
}

/** Every 429 carries a Retry-After in whole seconds. */
function assertRetryAfter(answers: LightMyRequestResponse[]) {
  for (const a of answers.filter((r) => r.statusCode === 429 || r.statusCode === 503)) {
    assert.ok(Number(a.headers['retry-after']) >= 1, `Retry-After ${a.headers['retry-after']}`);
  }
}

forEachDialect(
  'sign-in limits under concurrent guesses (issue 20)',
  (ctx) => {
    before(async () => {
      for (const name of ['ada', 'bob', 'cy', 'dee', 'eve']) await createUser(ctx(), `${name}@example.com`);
    });

    it('evaluates at most 5 of 60 concurrent wrong passwords and the right one from one address', async () => {
      const guesses = Array.from({ length: 60 }, (_, i) => signIn(ctx(), 'ada@example.com', `wrong password ${i}`, '203.0.113.5'));
      const answers = await Promise.all([...guesses, signIn(ctx(), 'ada@example.com', PASSWORD, '203.0.113.5')]);
      const counts = statuses(answers);
      assert.ok((counts[401] ?? 0) + (counts[201] ?? 0) <= 5, `evaluated: ${JSON.stringify(counts)}`);
      assert.equal((counts[401] ?? 0) + (counts[201] ?? 0) + (counts[429] ?? 0), 61, JSON.stringify(counts));
      assertRetryAfter(answers);
      // The limit is reached: the right password does not get in, from this address or any other.
      assert.equal((await signIn(ctx(), 'ada@example.com', PASSWORD, '203.0.113.5')).statusCode, 429);
      assert.equal((await signIn(ctx(), 'ada@example.com', PASSWORD, '198.51.100.5')).statusCode, 429);
    });

    it('evaluates at most 20 concurrent wrong passwords from one address over many accounts', async () => {
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => signIn(ctx(), `nobody${i}@example.com`, 'wrong password', '203.0.113.6')));
      const counts = statuses(answers);
      assert.equal(counts[401], 20, JSON.stringify(counts));
      assert.equal(counts[429], 40, JSON.stringify(counts));
      assertRetryAfter(answers);
      assert.equal((await signIn(ctx(), 'bob@example.com', PASSWORD, '203.0.113.6')).statusCode, 429, 'the address is over its limit');
      assert.equal((await signIn(ctx(), 'bob@example.com', PASSWORD, '203.0.113.7')).statusCode, 201, 'other addresses are not');
    });

    it('holds the per-account limit across two instances of one database', async () => {
      const second = await startInstance(ctx().database, { FLAGPOST_PASSWORD_PER_CLIENT: '1000', FLAGPOST_PASSWORD_QUEUE: '1000' });
      try {
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) => signIn(i % 2 ? second : ctx(), 'cy@example.com', `wrong ${i}`, `198.51.100.${100 + i}`)),
        );
        const counts = statuses(answers);
        assert.equal(counts[401], 5, JSON.stringify(counts));
        assert.equal(counts[429], 35, JSON.stringify(counts));
      } finally {
        await second.app.close();
        await second.services.stop();
        await second.handle.close();
      }
    });

    it('gives an attempt back when the password was right, and keeps the wrong ones', async () => {
      for (let i = 0; i < 4; i++) assert.equal((await signIn(ctx(), 'dee@example.com', `wrong ${i}`, `192.0.2.${i}`)).statusCode, 401);
      for (let i = 0; i < 3; i++) assert.equal((await signIn(ctx(), 'dee@example.com', PASSWORD, `192.0.2.${10 + i}`)).statusCode, 201);
      // Four wrong ones are still counted: the fifth is the last one evaluated.
      assert.equal((await signIn(ctx(), 'dee@example.com', 'wrong again', '192.0.2.20')).statusCode, 401);
      assert.equal((await signIn(ctx(), 'dee@example.com', PASSWORD, '192.0.2.21')).statusCode, 429);
    });

    it('evaluates at most 20 of 60 concurrent invitation tokens from one address, the right one included', async () => {
      const invited = (await ctx().admin('POST', '/admin/v1/invitations', { email: 'fay@example.com', role: 'viewer' })).json();
      const accept = (token: string, remoteAddress: string) =>
        ctx().app.inject({ method: 'POST', url: '/admin/v1/invitations/accept', remoteAddress, payload: { token, password: PASSWORD } });
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => accept(`fpi_wrong${i}`, '203.0.113.8')));
      const counts = statuses(answers);
      assert.equal(counts[400], 20, JSON.stringify(counts));
      assert.equal(counts[429], 40, JSON.stringify(counts));
      assert.equal((await accept(invited.token, '203.0.113.8')).statusCode, 429);
      assert.equal((await accept(invited.token, '203.0.113.9')).statusCode, 201);
    });

    it('evaluates at most 5 of 30 concurrent wrong current passwords of a password change', async () => {
      const cookie = cookieOf(await signIn(ctx(), 'eve@example.com', PASSWORD, '203.0.113.10'));
      const change = (currentPassword: string) =>
        ctx().app.inject({
          method: 'POST',
          url: '/admin/v1/me/password',
          remoteAddress: '203.0.113.10',
          headers: { cookie, origin: ctx().config.publicUrl },
          payload: { currentPassword, newPassword: 'a brand new password' },
        });
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => change(`wrong ${i}`)));
      const counts = statuses(answers);
      assert.equal(counts[400], 5, JSON.stringify(counts));
      assert.equal(counts[429], 25, JSON.stringify(counts));
      assert.equal((await change(PASSWORD)).statusCode, 429);
    });
  },
  // The bound on concurrent work (tested below) would refuse most of these before any count: lift it.
  { FLAGPOST_PASSWORD_PER_CLIENT: '1000', FLAGPOST_PASSWORD_QUEUE: '1000' },
);

forEachDialect(
  'bounded password work (issue 20)',
  (ctx) => {
    before(async () => {
      await createUser(ctx(), 'ada@example.com');
    });

    it("refuses a client's sign-ins beyond its share at once with 429, and counts none of them", async () => {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(ctx(), `n${i}@example.com`, 'wrong password', '203.0.113.20')));
      const counts = statuses(answers);
      assert.ok((counts[401] ?? 0) <= 2, JSON.stringify(counts));
      assert.ok((counts[429] ?? 0) >= 18, JSON.stringify(counts));
      assertRetryAfter(answers);
      // At most 2 of the address's 20 attempts were counted: it may still sign in.
      assert.equal((await signIn(ctx(), 'ada@example.com', PASSWORD, '203.0.113.20')).statusCode, 201);
    });

    it('answers 503 with Retry-After once the queue is full, and groups IPv6 per /64', async () => {
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(ctx(), `m${i}@example.com`, 'wrong password', `198.51.100.${i}`)));
      const counts = statuses(answers);
      assert.ok((counts[503] ?? 0) >= 1, JSON.stringify(counts));
      assert.ok((counts[401] ?? 0) <= 6, JSON.stringify(counts));
      const refused = answers.find((a) => a.statusCode === 503)!;
      assert.deepEqual(refused.json(), { error: true, message: 'Service unavailable' });
      assertRetryAfter(answers);
      const v6 = await Promise.all(Array.from({ length: 6 }, (_, i) => signIn(ctx(), `v${i}@example.com`, 'wrong password', `2001:db8:5:6::${i + 1}`)));
      assert.ok((statuses(v6)[429] ?? 0) >= 4, JSON.stringify(statuses(v6)));
    });

    it('lets another user sign in while one address sends 120 at once', async () => {
      const flood = Array.from({ length: 120 }, (_, i) => signIn(ctx(), `f${i}@example.com`, 'wrong password', '203.0.113.30'));
      const mine = signIn(ctx(), 'ada@example.com', PASSWORD, '203.0.113.31');
      const [answer, ...rest] = await Promise.all([mine, ...flood]);
      assert.equal(answer!.statusCode, 201, answer!.body);
      assert.ok((statuses(rest)[429] ?? 0) >= 118);
    });
  },
  { FLAGPOST_PASSWORD_CONCURRENCY: '2', FLAGPOST_PASSWORD_QUEUE: '4', FLAGPOST_PASSWORD_PER_CLIENT: '2' },
);

for (const dialect of dialects()) {
  describe(`sessions of a rotated admin token [${dialect}] (issue 20)`, () => {
    let database: Awaited<ReturnType<typeof createTestDatabase>>;
    before(async () => {
      database = await createTestDatabase(dialect);
    });
    after(async () => database.drop());

    it('end when the server restarts with another admin token', async () => {
      const first = await startInstance(database, { FLAGPOST_ADMIN_TOKEN: 'the-first-admin-token-0123' });
      const signedIn = await first.app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { token: 'the-first-admin-token-0123' } });
      assert.equal(signedIn.statusCode, 201);
      const cookie = cookieOf(signedIn);
      assert.equal((await first.app.inject({ method: 'GET', url: '/admin/v1/projects', headers: { cookie } })).statusCode, 200);
      await first.app.close();
      await first.services.stop();
      await first.handle.close();

      const second = await startInstance(database, { FLAGPOST_ADMIN_TOKEN: 'the-second-admin-token-0123' });
      try {
        assert.equal((await second.app.inject({ method: 'GET', url: '/admin/v1/projects', headers: { cookie } })).statusCode, 401);
        const again = await second.app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { token: 'the-second-admin-token-0123' } });
        assert.equal((await second.app.inject({ method: 'GET', url: '/admin/v1/projects', headers: { cookie: cookieOf(again) } })).statusCode, 200);
      } finally {
        await second.app.close();
        await second.services.stop();
        await second.handle.close();
      }
    });
  });
}
