import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { AppError } from '../../src/errors.ts';
import { flagConfig, type FlagWrite } from '../../src/flags/index.ts';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';

// Issue 30: one write door for a flag. A guard added once to the door (as the experiments and releases
// rooms add theirs) refuses the write on every path that changes a flag: the admin API, the flagd
// import, flags as code and a change request's application; a refused write changes nothing.

const OWNED = 'owned';

forEachDialect('the write door of a flag asks its guards on every path (issue 30)', (ctx) => {
  let project: ProjectFixture;
  const seen: FlagWrite['kind'][] = [];
  const flagsOf = async () => (await ctx().admin('GET', `/admin/v1/projects/${project.key}/flags`)).json().flags as Array<Record<string, unknown>>;

  before(async () => {
    project = await createProject(ctx(), 'Guarded');
    await createFlag(ctx(), project.key, { slug: OWNED, description: 'owned by a running experiment' });
    await createFlag(ctx(), project.key, { slug: 'free' });
    ctx().services.flagWrites.guard({
      name: 'no hand edit of a flag an experiment owns (test)',
      async check(_trx, write) {
        seen.push(write.kind);
        const slug = write.kind === 'update' ? write.before.slug : write.slug;
        if (slug === OWNED) throw new AppError('conflict', `the flag ${OWNED} is owned by a running experiment`);
      },
    });
  });

  describe('refused', () => {
    it('through the admin API: an update and a delete', async () => {
      const before = await flagsOf();
      const env = project.environments[0]!.key;
      const patched = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/${OWNED}`, { enabled: true });
      assert.equal(patched.statusCode, 409, patched.body);
      assert.match(patched.json().message, /owned by a running experiment/);
      const deleted = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/${OWNED}`);
      assert.equal(deleted.statusCode, 409, deleted.body);
      assert.deepEqual(await flagsOf(), before);
    });

    it('through the flagd import, all or nothing', async () => {
      const before = await flagsOf();
      const env = project.environments[0]!.key;
      const res = await ctx().admin('PUT', `/admin/v1/projects/${project.key}/environments/${env}/flagd`, {
        flags: {
          free: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' },
          [OWNED]: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' },
        },
      });
      assert.equal(res.statusCode, 409, res.body);
      assert.deepEqual(await flagsOf(), before, 'the free flag is not switched on either');
    });

    it('through flags as code', async () => {
      const before = await flagsOf();
      const document = (await ctx().admin('GET', `/admin/v1/projects/${project.key}/document`)).json();
      const environment = project.environments[0]!.name;
      document.flags[OWNED].environments[environment].defaultVariant = 'on';
      const res = await ctx().admin('POST', '/admin/v1/documents/apply', { document, projectKey: project.key });
      assert.equal(res.statusCode, 409, res.body);
      assert.deepEqual(await flagsOf(), before);
    });

    it('through the application of a change request (FlagService.applyConfig, the path of change requests, promotion and revert)', async () => {
      const before = await flagsOf();
      const { services } = ctx();
      const { project: p, environment } = await services.projects.getEnvironment(project.key, project.environments[0]!.key);
      const flag = await services.flags.findFlag(environment.id, OWNED);
      const actor = { type: 'admin_token', id: null, label: 'test' } as const;
      await assert.rejects(
        services.events.transaction(services.handle.db, (trx, emit) =>
          services.flags.applyConfig(trx, emit, { project: p, environment }, OWNED, { ...flagConfig(flag!), description: 'changed' }, flag!.version, actor),
        ),
        (error: unknown) => error instanceof AppError && error.kind === 'conflict',
      );
      assert.deepEqual(await flagsOf(), before);
    });
  });

  it('lets other flags through, on every path, and the guard saw each kind of write', async () => {
    const env = project.environments[0]!.key;
    const patched = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/free`, { enabled: true });
    assert.equal(patched.statusCode, 200, patched.body);
    await createFlag(ctx(), project.key, { slug: 'doomed' });
    const deleted = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/flags/doomed`);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.deepEqual([...new Set(seen)].sort(), ['create', 'delete', 'update']);
  });
});
