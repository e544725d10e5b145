import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';

// Issue 22 through the admin API: projects renamed and deleted, environments deleted, flags renamed,
// tagged, archived and restored. Reads through the flag interface follow at once (the read model drops
// what changed), the audit log records each action, and the refusals say why.

forEachDialect('renaming, deleting, tagging and archiving (issue 22)', (ctx) => {
  let project: ProjectFixture;
  const read = async (projectKey: string, envKey: string, slug: string) =>
    ctx().app.inject({ method: 'GET', url: `/v1/flags/${slug}`, headers: { 'x-project-key': projectKey, 'x-environment-key': envKey } });
  const audit = async (projectKey: string) =>
    (await ctx().admin('GET', `/admin/v1/audit?project=${projectKey}`)).json().entries as Array<{
      action: string;
      entityId: string;
      changes: Record<string, unknown>;
    }>;

  before(async () => {
    project = await createProject(ctx());
  });

  describe('projects', () => {
    it('renames a project and keeps its key', async () => {
      const renamed = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}`, { name: '  Storefront  ' });
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal(renamed.json().name, 'Storefront');
      assert.equal(renamed.json().key, project.key);
      assert.equal((await ctx().admin('GET', `/admin/v1/projects/${project.key}`)).json().name, 'Storefront');
      const entry = (await audit(project.key))[0]!;
      assert.equal(entry.action, 'project.renamed');
      assert.deepEqual(entry.changes.name, { before: project.name, after: 'Storefront' });
    });

    it('refuses an empty name with the field named', async () => {
      const refused = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}`, { name: '' });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().details[0].field, 'body.name');
      assert.equal((await ctx().admin('PATCH', '/admin/v1/projects/nope', { name: 'X' })).statusCode, 404);
    });

    it('deletes a project with everything in it; its keys answer 404 and its history stays', async () => {
      const doomed = await createProject(ctx(), 'Trial');
      const env = doomed.environments[0]!.key;
      await createFlag(ctx(), doomed.key, { slug: 'trial-flag', enabled: true });
      assert.equal((await read(doomed.key, env, 'trial-flag')).statusCode, 200, 'read once, so the read model holds it');
      const deleted = await ctx().admin('DELETE', `/admin/v1/projects/${doomed.key}`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal((await ctx().admin('GET', `/admin/v1/projects/${doomed.key}`)).statusCode, 404);
      assert.equal((await read(doomed.key, env, 'trial-flag')).statusCode, 404);
      const entries = (await ctx().admin('GET', '/admin/v1/audit?limit=100')).json().entries as Array<{ action: string; entityId: string }>;
      assert.deepEqual(entries[0], { ...entries[0], action: 'project.deleted', entityId: doomed.key });
      assert.ok(
        entries.some((e) => e.action === 'flag.created' && e.entityId === 'trial-flag'),
        'the older entries stay',
      );
      assert.equal((await ctx().admin('DELETE', `/admin/v1/projects/${doomed.key}`)).statusCode, 404);
    });
  });

  describe('environments', () => {
    it('deletes an environment with its flag values; its keys answer 404; the last one stays', async () => {
      const trial = await createProject(ctx(), 'Environments');
      await createFlag(ctx(), trial.key, { slug: 'everywhere' });
      const [first, second, third] = trial.environments;
      assert.equal((await read(trial.key, second!.key, 'everywhere')).statusCode, 200);
      const deleted = await ctx().admin('DELETE', `/admin/v1/projects/${trial.key}/environments/${second!.key}`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal((await read(trial.key, second!.key, 'everywhere')).statusCode, 404);
      const flags = (await ctx().admin('GET', `/admin/v1/projects/${trial.key}/flags`)).json().flags;
      assert.deepEqual(
        flags[0].environments.map((e: { environment: { key: string } }) => e.environment.key),
        [first!.key, third!.key],
      );
      assert.equal((await audit(trial.key))[0]!.action, 'environment.deleted');
      assert.equal((await ctx().admin('DELETE', `/admin/v1/projects/${trial.key}/environments/${third!.key}`)).statusCode, 204);
      const last = await ctx().admin('DELETE', `/admin/v1/projects/${trial.key}/environments/${first!.key}`);
      assert.equal(last.statusCode, 409);
      assert.equal(last.json().message, `Environment ${first!.key} is the last one of project ${trial.key}: a project keeps at least one environment`);
      assert.equal((await ctx().admin('DELETE', `/admin/v1/projects/${trial.key}/environments/nope`)).statusCode, 404);
    });
  });

  describe('flags', () => {
    it('renames a flag in every environment: the new slug serves, the old one answers 404, feedback follows', async () => {
      await createFlag(ctx(), project.key, { slug: 'old-name', enabled: true, isPreview: true });
      const env = project.environments[0]!.key;
      assert.equal((await read(project.key, env, 'old-name')).json().enabled, true);
      const feedback = await ctx().app.inject({
        method: 'POST',
        url: '/v1/flags/preview/feedback',
        headers: { 'x-project-key': project.key, 'x-environment-key': env, 'content-type': 'application/json' },
        payload: { flagKey: 'old-name', mood: 'HAPPY', rating: 5 },
      });
      assert.equal(feedback.statusCode, 201, feedback.body);
      const renamed = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/old-name`, { slug: 'new-name' });
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal(renamed.json().slug, 'new-name');
      assert.equal(renamed.json().environments.length, project.environments.length);
      assert.equal((await read(project.key, env, 'new-name')).json().enabled, true);
      assert.equal((await read(project.key, env, 'old-name')).statusCode, 404);
      const after = await ctx().admin('GET', `/admin/v1/projects/${project.key}/environments/${env}/flags/new-name/feedback`);
      assert.equal(after.json().summary.total, 1, 'the feedback moved with the flag');
      const entry = (await audit(project.key))[0]!;
      assert.equal(entry.action, 'flag.renamed');
      assert.deepEqual(entry.changes.slug, { before: 'old-name', after: 'new-name' });
    });

    it('refuses a rename onto an existing slug, onto a reserved one, or of a prerequisite', async () => {
      await createFlag(ctx(), project.key, { slug: 'taken' });
      await createFlag(ctx(), project.key, { slug: 'base' });
      const onto = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/base`, { slug: 'taken' });
      assert.equal(onto.statusCode, 409);
      assert.equal(onto.json().message, `Flag with slug taken already exists in project ${project.key}`);
      const reserved = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/base`, { slug: 'preview' });
      assert.equal(reserved.statusCode, 400);
      const bad = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/base`, { slug: 'no spaces' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().details[0].field, 'body.slug');
      const env = project.environments[0]!.key;
      const dependent = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/taken`, {
        prerequisites: [{ flag: 'base', variants: ['on'] }],
      });
      assert.equal(dependent.statusCode, 200, dependent.body);
      const refused = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/base`, { slug: 'base-2' });
      assert.equal(refused.statusCode, 409);
      assert.equal(refused.json().message, `Flag base cannot be renamed while these flags name it as a prerequisite: taken (${project.environments[0]!.name})`);
      assert.equal((await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/nope`, { slug: 'x' })).statusCode, 404);
      assert.equal((await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/base`, {})).statusCode, 400);
    });

    it('tags a flag (normalised, sorted, no duplicates) and lists the tags', async () => {
      await createFlag(ctx(), project.key, { slug: 'tagged' });
      const tagged = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/tagged`, { tags: ['team-b', 'q3', 'q3'] });
      assert.equal(tagged.statusCode, 200, tagged.body);
      assert.deepEqual(tagged.json().tags, ['q3', 'team-b']);
      const listed = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).json().flags.find((f: { slug: string }) => f.slug === 'tagged');
      assert.deepEqual(listed.tags, ['q3', 'team-b']);
      assert.equal(listed.archivedAt, null);
      const invalid = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/tagged`, { tags: ['Has Space'] });
      assert.equal(invalid.statusCode, 400);
      assert.match(invalid.json().details[0].field, /^body\.tags/);
      const entry = (await audit(project.key))[0]!;
      assert.equal(entry.action, 'flag.updated');
      assert.deepEqual(entry.changes.tags, { before: [], after: ['q3', 'team-b'] });
    });

    it('archives a flag, which is still served, and restores it; a new environment copies the state', async () => {
      await createFlag(ctx(), project.key, { slug: 'retired', enabled: true });
      const env = project.environments[0]!.key;
      const archived = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/retired`, { archived: true });
      assert.equal(archived.statusCode, 200, archived.body);
      assert.match(archived.json().archivedAt, /^\d{4}-\d\d-\d\dT/);
      assert.equal((await read(project.key, env, 'retired')).json().enabled, true, 'an archived flag is served as before');
      assert.equal((await audit(project.key))[0]!.action, 'flag.archived');
      const added = await ctx().admin('POST', `/admin/v1/projects/${project.key}/environments`, { name: 'qa' });
      assert.equal(added.statusCode, 201);
      const listed = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).json().flags.find((f: { slug: string }) => f.slug === 'retired');
      assert.equal(listed.archivedAt, archived.json().archivedAt);
      const restored = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/flags/retired`, { archived: false });
      assert.equal(restored.json().archivedAt, null);
      assert.equal((await audit(project.key))[0]!.action, 'flag.unarchived');
    });
  });
});
