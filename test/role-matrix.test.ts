import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { ADMIN_TOKEN, forEachDialect, type TestContext } from './support/context.ts';

// Issue 13's role matrix: every admin route, for each role and without a credential, answers the status
// its access class implies. The table classifies every route of the OpenAPI document; a new route that is
// not in the table fails the test until it is classified. Path parameters name nothing that exists and
// bodies are empty, so allowed requests answer 400, 404 or 2xx without changing any data: what is checked
// is that authorization happens first (401 without credential, 403 below the role), and never refuses a
// role the class allows.

type Access = 'viewer' | 'editor' | 'owner' | 'submissions' | 'user' | 'session' | 'admin_token' | 'any' | 'public';
type Who = 'none' | 'viewer' | 'editor' | 'owner' | 'admin token';

const ROUTES: Record<string, Access> = {
  'POST /admin/v1/sessions': 'public',
  'GET /admin/v1/sessions/current': 'any',
  'DELETE /admin/v1/sessions/current': 'any',
  'POST /admin/v1/users': 'admin_token',
  'GET /admin/v1/users': 'owner',
  'PATCH /admin/v1/users/{id}': 'owner',
  'DELETE /admin/v1/users/{id}': 'owner',
  'POST /admin/v1/invitations': 'owner',
  'GET /admin/v1/invitations': 'owner',
  'DELETE /admin/v1/invitations/{id}': 'owner',
  'POST /admin/v1/invitations/accept': 'public',
  'POST /admin/v1/me/password': 'user',
  'GET /admin/v1/me/tokens': 'user',
  'POST /admin/v1/me/tokens': 'session',
  'DELETE /admin/v1/me/tokens/{id}': 'user',
  'GET /admin/v1/settings': 'viewer',
  'PATCH /admin/v1/settings': 'owner',
  'POST /admin/v1/projects': 'editor',
  'GET /admin/v1/projects': 'viewer',
  'GET /admin/v1/projects/{projectKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}': 'editor',
  // A project's deletion takes everything in it: owners only.
  'DELETE /admin/v1/projects/{projectKey}': 'owner',
  'POST /admin/v1/projects/{projectKey}/environments': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/environments/{envKey}': 'editor',
  'POST /admin/v1/projects/{projectKey}/api-keys': 'editor',
  'GET /admin/v1/projects/{projectKey}/api-keys': 'viewer',
  'DELETE /admin/v1/projects/{projectKey}/api-keys/{id}': 'editor',
  'POST /admin/v1/projects/{projectKey}/flags': 'editor',
  'GET /admin/v1/projects/{projectKey}/flags': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}': 'editor',
  'PATCH /admin/v1/projects/{projectKey}/flags/{slug}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/flags/{slug}': 'editor',
  'GET /admin/v1/projects/{projectKey}/segments': 'viewer',
  'POST /admin/v1/projects/{projectKey}/segments': 'editor',
  'GET /admin/v1/projects/{projectKey}/segments/{segmentKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/segments/{segmentKey}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/segments/{segmentKey}': 'editor',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flagd': 'viewer',
  'PUT /admin/v1/projects/{projectKey}/environments/{envKey}/flagd': 'editor',
  // The sync token is a secret shown only in the answer that creates it: viewers see whether one exists.
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flagd-sync-token': 'viewer',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flagd-sync-token': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/environments/{envKey}/flagd-sync-token': 'editor',
  // The playground only reads: it evaluates for a context it is given, as OFREP does.
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/evaluate': 'viewer',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/feedback': 'viewer',
  'GET /admin/v1/projects/{projectKey}/code-refs': 'viewer',
  'DELETE /admin/v1/projects/{projectKey}/code-refs': 'editor',
  'GET /admin/v1/projects/{projectKey}/code-refs/removals': 'viewer',
  'GET /admin/v1/projects/{projectKey}/stale-flags': 'viewer',
  'POST /admin/v1/forms': 'editor',
  'GET /admin/v1/forms': 'viewer',
  'GET /admin/v1/forms/{formKey}': 'viewer',
  'PATCH /admin/v1/forms/{formKey}': 'editor',
  'POST /admin/v1/forms/{formKey}/webhook-secret': 'editor',
  'DELETE /admin/v1/forms/{formKey}': 'editor',
  'GET /admin/v1/forms/{formKey}/submissions': 'submissions',
  'GET /admin/v1/forms/{formKey}/submissions.csv': 'submissions',
  'GET /admin/v1/forms/{formKey}/submissions.json': 'submissions',
  'GET /admin/v1/forms/{formKey}/submissions/{id}': 'submissions',
  'PATCH /admin/v1/forms/{formKey}/submissions/{id}': 'editor',
  'DELETE /admin/v1/forms/{formKey}/submissions/{id}': 'editor',
  'GET /admin/v1/forms/{formKey}/submissions/{id}/files/{fileId}': 'submissions',
  'POST /admin/v1/personal-data/export': 'editor',
  'POST /admin/v1/personal-data/erase': 'editor',
  'GET /admin/v1/audit': 'viewer',
};

const RANK = { viewer: 1, editor: 2, owner: 3, 'admin token': 3 } as const;

/** Whether `who` may use a route of class `access`; `viewersSeeSubmissions` is the owner's setting. */
function allowed(access: Access, who: Who, viewersSeeSubmissions: boolean): boolean {
  if (access === 'public') return true;
  if (who === 'none') return false;
  switch (access) {
    case 'any':
      return true;
    case 'user':
      return who !== 'admin token';
    case 'session':
      // Members call with access tokens here, and the admin token has no user: neither may.
      return false;
    case 'admin_token':
      return who === 'admin token';
    case 'submissions':
      return RANK[who] >= RANK.editor || viewersSeeSubmissions;
    default:
      return RANK[who] >= RANK[access];
  }
}

const PASSWORD = 'a long test password 0123';

forEachDialect('role matrix', (ctx) => {
  const bearer: Partial<Record<Who, string>> = { 'admin token': ADMIN_TOKEN };
  let routes: string[] = [];

  /** A member of `role` and a personal access token of theirs (signed in once to create it). */
  async function memberToken(c: TestContext, role: 'owner' | 'editor' | 'viewer'): Promise<string> {
    const email = `${role}@example.com`;
    const created = await c.admin('POST', '/admin/v1/users', { email, password: PASSWORD, role });
    assert.equal(created.statusCode, 201, created.body);
    const signIn = await c.app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { email, password: PASSWORD } });
    assert.equal(signIn.statusCode, 201, signIn.body);
    const cookie = signIn.cookies.map((k) => `${k.name}=${k.value}`).join('; ');
    const token = await c.app.inject({
      method: 'POST',
      url: '/admin/v1/me/tokens',
      headers: { cookie, origin: c.config.publicUrl },
      payload: { name: `${role} automation`, password: PASSWORD },
    });
    assert.equal(token.statusCode, 201, token.body);
    return token.json().token;
  }

  before(async () => {
    // Owner first: the first user must be one.
    for (const role of ['owner', 'editor', 'viewer'] as const) bearer[role] = await memberToken(ctx(), role);
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths)
      .filter(([url]) => url.startsWith('/admin/'))
      .flatMap(([url, item]) =>
        Object.keys(item)
          .filter((m) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
          .map((m) => `${m.toUpperCase()} ${url}`),
      )
      .sort();
  });

  it('classifies every admin route of the OpenAPI document, and only those', () => {
    assert.deepEqual(routes, Object.keys(ROUTES).sort());
  });

  const check = async (viewersSeeSubmissions: boolean) => {
    const problems: string[] = [];
    for (const route of routes) {
      const [method, template] = route.split(' ') as [string, string];
      const url = template.replace(/\{\w+\}/g, 'nope');
      for (const who of ['none', 'viewer', 'editor', 'owner', 'admin token'] as const) {
        const headers: Record<string, string> = {};
        if (who !== 'none') headers.authorization = `Bearer ${bearer[who]}`;
        const res = await ctx().app.inject({
          method: method as 'GET',
          url,
          headers,
          // A documentation address per caller, so that 401s do not add up to the address lockout.
          remoteAddress: `192.0.2.${routes.indexOf(route) % 250}`,
          ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
        });
        const access = ROUTES[route]!;
        const ok = allowed(access, who, viewersSeeSubmissions);
        const expected = who === 'none' && !ok ? [401] : ok ? null : [403];
        const fine = expected ? expected.includes(res.statusCode) : ![401, 403].includes(res.statusCode) && res.statusCode < 500;
        if (!fine) problems.push(`${route} as ${who}: ${res.statusCode} (${access}) ${res.body.slice(0, 120)}`);
        if (res.statusCode >= 400) assert.equal(res.json().error, true, `${route} as ${who} answers the error object`);
      }
    }
    assert.deepEqual(problems, []);
  };

  it('answers each role and no credential as the table says', async () => {
    await check(false);
  });

  it('lets viewers read submissions once an owner allows it', async () => {
    const res = await ctx().app.inject({
      method: 'PATCH',
      url: '/admin/v1/settings',
      headers: { authorization: `Bearer ${bearer.owner}` },
      payload: { viewersSeeSubmissions: true },
    });
    assert.deepEqual(res.json(), { viewersSeeSubmissions: true });
    await check(true);
  });
});
