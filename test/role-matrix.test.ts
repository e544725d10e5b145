import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { ADMIN_TOKEN, forEachDialect, type TestContext } from './support/context.ts';

// Issue 13's role matrix: every admin route, for each role and without a credential, answers the status
// its access class implies. The table classifies every route of the OpenAPI document; a new route that is
// not in the table fails the test until it is classified. Path parameters name nothing that exists and
// bodies are empty, so allowed requests answer 400, 404 or 2xx without changing any data: what is checked
// is that authorization happens first (401 without credential, 403 below the role), and never refuses a
// role the class allows. Roles per project (ADR 0033): the same routes again as members whose instance role
// is `none`, with a role on project P only (viewer, editor, admin) or none at all, with P's key and a form
// of P in the paths: their project role decides, and a stranger to P gets the 404 of a missing project.

type Access = 'viewer' | 'editor' | 'project_admin' | 'owner' | 'submissions' | 'user' | 'session' | 'admin_token' | 'any' | 'public';
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
  // Single sign-on: the sign-in page's facts, the redirect to the provider and its callback (ADR 0032).
  'GET /admin/v1/sso': 'public',
  'GET /admin/v1/sso/start': 'public',
  'GET /admin/v1/sso/callback': 'public',
  'POST /admin/v1/me/password': 'user',
  'GET /admin/v1/me/tokens': 'user',
  'POST /admin/v1/me/tokens': 'session',
  'DELETE /admin/v1/me/tokens/{id}': 'user',
  'GET /admin/v1/users/{id}/project-roles': 'owner',
  'PUT /admin/v1/users/{id}/project-roles/{projectKey}': 'owner',
  'DELETE /admin/v1/users/{id}/project-roles/{projectKey}': 'owner',
  'GET /admin/v1/settings': 'viewer',
  'PATCH /admin/v1/settings': 'owner',
  'POST /admin/v1/projects': 'editor',
  'GET /admin/v1/projects': 'viewer',
  'GET /admin/v1/projects/{projectKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}': 'editor',
  // A project's deletion takes everything in it: owners only.
  'DELETE /admin/v1/projects/{projectKey}': 'owner',
  // Environments, keys and sync tokens: project admins, and instance editors and owners (ADR 0033).
  'DELETE /admin/v1/projects/{projectKey}/environments/{envKey}': 'project_admin',
  'POST /admin/v1/projects/{projectKey}/environments': 'project_admin',
  'POST /admin/v1/projects/{projectKey}/api-keys': 'project_admin',
  // Renaming needs an editor; the protection fields in the body need an owner (checked in test/changes/change-management.test.ts).
  'PATCH /admin/v1/projects/{projectKey}/environments/{envKey}': 'editor',
  // Change management (issue 24): viewers read, editors propose, approve, schedule and apply.
  'GET /admin/v1/projects/{projectKey}/change-requests': 'viewer',
  'POST /admin/v1/projects/{projectKey}/change-requests': 'editor',
  'GET /admin/v1/projects/{projectKey}/change-requests/{id}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/change-requests/{id}': 'editor',
  'POST /admin/v1/projects/{projectKey}/change-requests/{id}/submit': 'editor',
  'POST /admin/v1/projects/{projectKey}/change-requests/{id}/approve': 'editor',
  'POST /admin/v1/projects/{projectKey}/change-requests/{id}/reject': 'editor',
  'POST /admin/v1/projects/{projectKey}/change-requests/{id}/cancel': 'editor',
  'POST /admin/v1/projects/{projectKey}/change-requests/{id}/apply': 'editor',
  'POST /admin/v1/projects/{projectKey}/change-requests/{id}/comments': 'editor',
  'PUT /admin/v1/projects/{projectKey}/change-requests/{id}/schedule': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/change-requests/{id}/schedule': 'editor',
  'GET /admin/v1/projects/{projectKey}/compare': 'viewer',
  'POST /admin/v1/projects/{projectKey}/promote': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/revert': 'editor',
  'GET /admin/v1/projects/{projectKey}/api-keys': 'viewer',
  // Project webhooks on flag changes (issue 23): viewers read them (URLs redacted), editors manage them
  // and ask for redeliveries, as they manage the flags whose changes they announce.
  'POST /admin/v1/projects/{projectKey}/webhooks': 'editor',
  'GET /admin/v1/projects/{projectKey}/webhooks': 'viewer',
  'GET /admin/v1/projects/{projectKey}/webhooks/{id}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/webhooks/{id}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/webhooks/{id}': 'editor',
  'GET /admin/v1/projects/{projectKey}/webhooks/{id}/deliveries': 'viewer',
  'POST /admin/v1/projects/{projectKey}/webhooks/{id}/deliveries/{deliveryId}/redeliver': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/api-keys/{id}': 'project_admin',
  // Experiments (issue 32): viewers read metrics, experiments and results; editors define metrics and
  // create, change, start and stop experiments, as they change the flags whose splits they measure.
  'POST /admin/v1/projects/{projectKey}/metrics': 'editor',
  'GET /admin/v1/projects/{projectKey}/metrics': 'viewer',
  'GET /admin/v1/projects/{projectKey}/metrics/{metricKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/metrics/{metricKey}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/metrics/{metricKey}': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/experiments': 'editor',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/experiments': 'viewer',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}/start': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}/stop': 'editor',
  // Releases (issue 33): viewers read releases, their readings and templates; editors start and move
  // releases and manage templates, as they change the flags releases write.
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases': 'editor',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases': 'viewer',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}': 'viewer',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}/readings': 'viewer',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}/approve': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}/pause': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}/resume': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}/rollback': 'editor',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}/releases/{releaseId}/cancel': 'editor',
  'POST /admin/v1/projects/{projectKey}/release-templates': 'editor',
  'GET /admin/v1/projects/{projectKey}/release-templates': 'viewer',
  'GET /admin/v1/projects/{projectKey}/release-templates/{templateKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/release-templates/{templateKey}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/release-templates/{templateKey}': 'editor',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}/results': 'viewer',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/experiments/{experimentKey}/results.csv': 'viewer',
  'POST /admin/v1/projects/{projectKey}/flags': 'editor',
  'GET /admin/v1/projects/{projectKey}/flags': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/environments/{envKey}/flags/{slug}': 'editor',
  'PATCH /admin/v1/projects/{projectKey}/flags/{slug}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/flags/{slug}': 'editor',
  'GET /admin/v1/projects/{projectKey}/usage': 'viewer',
  'GET /admin/v1/projects/{projectKey}/flags/{slug}/usage': 'viewer',
  'GET /admin/v1/projects/{projectKey}/segments': 'viewer',
  'POST /admin/v1/projects/{projectKey}/segments': 'editor',
  'GET /admin/v1/projects/{projectKey}/segments/{segmentKey}': 'viewer',
  'PATCH /admin/v1/projects/{projectKey}/segments/{segmentKey}': 'editor',
  'DELETE /admin/v1/projects/{projectKey}/segments/{segmentKey}': 'editor',
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flagd': 'viewer',
  'PUT /admin/v1/projects/{projectKey}/environments/{envKey}/flagd': 'editor',
  'GET /admin/v1/projects/{projectKey}/document': 'viewer',
  // Editors create projects and change flags and segments; apply does both.
  'POST /admin/v1/documents/apply': 'editor',
  'POST /admin/v1/imports/unleash': 'editor',
  // The sync token is a secret shown only in the answer that creates it: viewers see whether one exists.
  'GET /admin/v1/projects/{projectKey}/environments/{envKey}/flagd-sync-token': 'viewer',
  'POST /admin/v1/projects/{projectKey}/environments/{envKey}/flagd-sync-token': 'project_admin',
  'DELETE /admin/v1/projects/{projectKey}/environments/{envKey}/flagd-sync-token': 'project_admin',
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
  // Issue 34: trying spam checks on the last submissions changes nothing, but is part of editing the form.
  'POST /admin/v1/forms/{formKey}/spam-rules/dry-run': 'editor',
  'GET /admin/v1/forms/{formKey}/submissions': 'submissions',
  'GET /admin/v1/forms/{formKey}/submissions.csv': 'submissions',
  'GET /admin/v1/forms/{formKey}/submissions.json': 'submissions',
  'GET /admin/v1/forms/{formKey}/submissions/{id}': 'submissions',
  'PATCH /admin/v1/forms/{formKey}/submissions/{id}': 'editor',
  'DELETE /admin/v1/forms/{formKey}/submissions/{id}': 'editor',
  'GET /admin/v1/forms/{formKey}/submissions/{id}/files/{fileId}': 'submissions',
  // Deliveries (issue 34): editors, who set where deliveries go, test and re-send them.
  'POST /admin/v1/forms/{formKey}/test-delivery': 'editor',
  'POST /admin/v1/forms/{formKey}/deliveries/{deliveryId}/resend': 'editor',
  'POST /admin/v1/forms/{formKey}/deliveries/resend-failed': 'editor',
  // Rendering the e-mails sends and stores nothing, but tries settings an editor is writing.
  'POST /admin/v1/forms/{formKey}/mail-preview': 'editor',
  // Read-only tokens for integrations (issue 34): editors, who decide where a form's data goes.
  'POST /admin/v1/forms/{formKey}/read-tokens': 'editor',
  'GET /admin/v1/forms/{formKey}/read-tokens': 'editor',
  'DELETE /admin/v1/forms/{formKey}/read-tokens/{tokenId}': 'editor',
  // Counts per day, no field of any submission: whoever reads the form.
  'GET /admin/v1/forms/{formKey}/analytics': 'viewer',
  'POST /admin/v1/personal-data/export': 'editor',
  'POST /admin/v1/personal-data/erase': 'editor',
  'GET /admin/v1/audit': 'viewer',
};

const RANK = { viewer: 1, editor: 2, owner: 3, 'admin token': 3 } as const;

/** Listings that show each member the projects (and their forms and entries) they have a role on. */
const LISTINGS = new Set(['GET /admin/v1/projects', 'GET /admin/v1/forms', 'GET /admin/v1/audit']);
/** Routes that name a project but act on a member: instance-wide, whatever the path says. */
const INSTANCE_WIDE = new Set(['PUT /admin/v1/users/{id}/project-roles/{projectKey}', 'DELETE /admin/v1/users/{id}/project-roles/{projectKey}']);
/** Members whose instance role is `none`, with a role on one project only, or on none. */
type ProjectWho = 'project viewer' | 'project editor' | 'project admin' | 'stranger';
const PROJECT_LEVEL: Record<ProjectWho, number> = { 'project viewer': 1, 'project editor': 2, 'project admin': 3, stranger: 0 };

/**
 * What a member with a role on project P only gets from a route whose path names P (or a form of P):
 * `ok`, 403, or 404 (a stranger to P gets P's 404, as for a project that does not exist).
 */
function projectAnswer(route: string, access: Access, who: ProjectWho, viewersSeeSubmissions: boolean): 'ok' | 403 | 404 {
  if (access === 'public' || access === 'any' || access === 'user') return 'ok';
  if (access === 'session' || access === 'admin_token') return 403;
  const scoped = (/\{(projectKey|formKey)\}/.test(route) && !INSTANCE_WIDE.has(route)) || LISTINGS.has(route);
  const level = scoped ? PROJECT_LEVEL[who] : 0;
  if (level === 0) return scoped && !LISTINGS.has(route) ? 404 : 403;
  const needed = { viewer: 1, editor: 2, project_admin: 3, owner: 4, submissions: viewersSeeSubmissions ? 1 : 2 }[access];
  return level >= needed ? 'ok' : 403;
}

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
    case 'project_admin':
      return RANK[who] >= RANK.editor;
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

  /** Project P with a form, project Q, a form of no project, and members with a role on P only. */
  const projectBearer: Partial<Record<ProjectWho, string>> = {};
  let p = { key: '', name: '' };
  let formOfP = '';

  async function projectMembers(c: TestContext): Promise<void> {
    p = (await c.admin('POST', '/admin/v1/projects', { name: 'Secret launch' })).json();
    await c.admin('POST', '/admin/v1/projects', { name: 'Other project' });
    formOfP = (await c.admin('POST', '/admin/v1/forms', { name: 'Launch form', projectKey: p.key })).json().key;
    await c.admin('POST', '/admin/v1/forms', { name: 'Instance form' });
    for (const who of ['project viewer', 'project editor', 'project admin', 'stranger'] as const) {
      const email = `${who.replace(' ', '-')}@example.com`;
      const created = await c.admin('POST', '/admin/v1/users', { email, password: PASSWORD, role: 'none' });
      assert.equal(created.statusCode, 201, created.body);
      if (who !== 'stranger') {
        const role = who.split(' ')[1];
        const given = await c.app.inject({
          method: 'PUT',
          url: `/admin/v1/users/${created.json().id}/project-roles/${p.key}`,
          headers: { authorization: `Bearer ${bearer.owner}` },
          payload: { role },
        });
        assert.equal(given.statusCode, 200, given.body);
        assert.deepEqual(given.json(), { projectKey: p.key, projectName: 'Secret launch', role });
      }
      const signIn = await c.app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { email, password: PASSWORD } });
      const cookie = signIn.cookies.map((k) => `${k.name}=${k.value}`).join('; ');
      const token = await c.app.inject({
        method: 'POST',
        url: '/admin/v1/me/tokens',
        headers: { cookie, origin: c.config.publicUrl },
        payload: { name: 'automation', password: PASSWORD },
      });
      assert.equal(token.statusCode, 201, token.body);
      projectBearer[who] = token.json().token;
    }
  }

  const checkProjects = async (viewersSeeSubmissions: boolean) => {
    const problems: string[] = [];
    for (const route of routes) {
      const [method, template] = route.split(' ') as [string, string];
      for (const who of ['project viewer', 'project editor', 'project admin', 'stranger'] as const) {
        // Deleting the form itself would take it from the routes after: a form of P made for the purpose.
        const form =
          route === 'DELETE /admin/v1/forms/{formKey}'
            ? (await ctx().admin('POST', '/admin/v1/forms', { name: 'Doomed', projectKey: p.key })).json().key
            : formOfP;
        const url = template
          .replace('{projectKey}', p.key)
          .replace('{formKey}', form)
          .replace(/\{\w+\}/g, 'nope');
        const res = await ctx().app.inject({
          method: method as 'GET',
          url,
          headers: { authorization: `Bearer ${projectBearer[who]}` },
          remoteAddress: `198.51.100.${routes.indexOf(route) % 250}`,
          ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
        });
        const expected = projectAnswer(route, ROUTES[route]!, who, viewersSeeSubmissions);
        // Allowed: no 401 or 403, and P and its form are found (a 404 names only the missing 'nope').
        const hiddenAnswer = [`Project with key ${p.key} does not exist`, `Form with key ${formOfP} does not exist`];
        const fine =
          expected === 'ok'
            ? ![401, 403].includes(res.statusCode) && res.statusCode < 500 && !(res.statusCode === 404 && hiddenAnswer.includes(res.json().message))
            : res.statusCode === expected;
        if (!fine) problems.push(`${route} as ${who}: ${res.statusCode} (expected ${expected}) ${res.body.slice(0, 120)}`);
        if (res.statusCode === 404 && expected === 404) {
          // The name of a project the member has no role on is never told, and the answer is that of a project that does not exist.
          assert.doesNotMatch(res.body, /Secret launch|Launch form/);
        }
        if (res.statusCode >= 400) assert.equal(res.json().error, true, `${route} as ${who} answers the error object`);
      }
    }
    assert.deepEqual(problems, []);
  };

  it('answers members with a role on one project only as their project role allows, and hides other projects', async () => {
    await projectMembers(ctx());
    await checkProjects(false);
  });

  it('lists only the projects, forms and audit entries of a member’s projects', async () => {
    const as = (who: ProjectWho, url: string) => ctx().app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${projectBearer[who]}` } });
    const projects = (await as('project viewer', '/admin/v1/projects')).json().projects as Array<{ name: string }>;
    assert.deepEqual(
      projects.map((x) => x.name),
      ['Secret launch'],
    );
    const forms = (await as('project editor', '/admin/v1/forms')).json().forms as Array<{ name: string; projectKey: string | null }>;
    assert.ok(forms.some((f) => f.name === 'Launch form'));
    assert.ok(
      forms.every((f) => f.projectKey === p.key),
      'neither the form of no project nor those of others',
    );
    const entries = (await as('project admin', '/admin/v1/audit')).json().entries as Array<{ projectKey: string | null }>;
    assert.ok(entries.length > 0);
    assert.ok(
      entries.every((e) => e.projectKey === p.key),
      JSON.stringify(entries.map((e) => e.projectKey)),
    );
    assert.equal((await as('stranger', '/admin/v1/projects')).statusCode, 403);
    const unknown = await as('stranger', '/admin/v1/projects/no-such-project');
    const hidden = await as('stranger', `/admin/v1/projects/${p.key}`);
    assert.equal(hidden.statusCode, 404);
    assert.equal(hidden.json().message, unknown.json().message.replace('no-such-project', p.key), 'a hidden project answers as one that does not exist');
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
    await checkProjects(true);
  });
});
