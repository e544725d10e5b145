import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createApiKey, createFlag, createProject, keys, type ProjectFixture } from '../support/fixtures.ts';

// Flag hygiene (issue 11, ADR 0019): whole-branch uploads, removal records, deleting a branch's
// references, and the stale-flag report. Time comes from the clock port, so "unchanged for N days" is exact.

const DAY = 86_400_000;
let now = Date.parse('2026-06-01T10:00:00.000Z');
const clock = () => new Date(now);

const row = (file: string, line: number, slug: string) => ({ filePath: file, lineNumber: line, lineContent: `useFlag("${slug}") // ${line}` });

forEachDialect(
  'flag hygiene',
  (ctx) => {
    let project: ProjectFixture;
    let token: string;
    const upload = (body: unknown, scope?: string) =>
      ctx().app.inject({
        method: 'POST',
        url: '/v1/flags/code-refs',
        headers: { 'content-type': 'application/json', ...keys(project), 'x-api-key': token, ...(scope ? { 'x-flagpost-scope': scope } : {}) },
        payload: JSON.stringify(body),
      });
    const refs = async (query = '') => {
      const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().references as Array<{ slug: string; branch: string; projectName: string; filePath: string; lineNumber: number }>;
    };
    const removals = async (query = '') => {
      const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs/removals${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().removals as Array<{
        slug: string;
        branch: string;
        projectName: string;
        removedAt: string;
        referenceCount: number;
        lastReferences: unknown[];
      }>;
    };
    const slugsOf = (list: Array<{ slug: string }>) => [...new Set(list.map((r) => r.slug))].sort();

    before(async () => {
      project = await createProject(ctx());
      token = await createApiKey(ctx(), project.key);
    });

    describe('whole-branch uploads (x-flagpost-scope: branch)', () => {
      it('removes the slugs the upload no longer reports, records them, and leaves other scopes alone', async () => {
        await upload({ branch: 'main', projectName: 'web', references: { a: [row('a.ts', 1, 'a')], b: [row('b.ts', 2, 'b'), row('c.ts', 3, 'b')] } }, 'branch');
        await upload({ branch: 'dev', projectName: 'web', references: { b: [row('b.ts', 9, 'b')] } }, 'branch');
        await upload({ branch: 'main', projectName: 'api', references: { b: [row('b.go', 4, 'b')] } }, 'branch');
        now += 1000;
        const res = await upload({ branch: 'main', projectName: 'web', references: { a: [row('a.ts', 5, 'a')] } }, 'branch');
        assert.equal(res.statusCode, 201, res.body);
        assert.equal(res.json().message, 'Code references stored for 1 flags on branch main; 1 flags no longer referenced there');
        assert.deepEqual(slugsOf(await refs('?branch=main&projectName=web')), ['a']);
        assert.deepEqual(slugsOf(await refs('?branch=dev')), ['b']);
        assert.deepEqual(slugsOf(await refs('?projectName=api')), ['b']);
        const recorded = await removals();
        assert.equal(recorded.length, 1);
        assert.deepEqual(
          { ...recorded[0], lastReferences: recorded[0]!.lastReferences.length },
          { slug: 'b', projectName: 'web', branch: 'main', removedAt: new Date(now).toISOString(), referenceCount: 2, lastReferences: 2 },
        );
      });

      it('forgets the removal when the slug is reported again in that scope', async () => {
        await upload({ branch: 'feature', projectName: 'web', references: { c: [row('c.ts', 1, 'c')] } }, 'branch');
        await upload({ branch: 'feature', projectName: 'web', references: {} }, 'branch');
        assert.deepEqual(slugsOf(await removals('?branch=feature')), ['c']);
        assert.deepEqual(await refs('?branch=feature'), []);
        await upload({ branch: 'feature', projectName: 'web', references: { c: [row('c.ts', 2, 'c')] } });
        assert.deepEqual(await removals('?branch=feature'), []);
      });

      it('keeps the D12 semantics without the header: slugs absent from the payload stay, nothing is recorded', async () => {
        await upload({ branch: 'd12', projectName: 'web', references: { a: [row('a.ts', 1, 'a')], b: [row('b.ts', 1, 'b')] } });
        await upload({ branch: 'd12', projectName: 'web', references: { a: [row('a.ts', 2, 'a')] } });
        assert.deepEqual(slugsOf(await refs('?branch=d12')), ['a', 'b']);
        assert.deepEqual(await removals('?branch=d12'), []);
        const slugs = await upload({ branch: 'd12', projectName: 'web', references: { a: [row('a.ts', 3, 'a')] } }, 'slugs');
        assert.equal(slugs.statusCode, 201);
        assert.deepEqual(slugsOf(await refs('?branch=d12')), ['a', 'b']);
      });

      it('keeps one upload when two of the same scope arrive at once', async () => {
        const many = (file: string) => ({ a: Array.from({ length: 50 }, (_, i) => row(file, i + 1, 'a')) });
        const answers = await Promise.all([
          upload({ branch: 'race', projectName: 'web', references: many('one.ts') }, 'branch'),
          upload({ branch: 'race', projectName: 'web', references: many('two.ts') }, 'branch'),
        ]);
        assert.deepEqual(
          answers.map((a) => a.statusCode),
          [201, 201],
        );
        const stored = await refs('?branch=race');
        assert.equal(stored.length, 50);
        assert.equal(new Set(stored.map((r) => r.filePath)).size, 1, 'all rows come from one upload');
      });

      it('refuses another scope value with the generic 400 and changes nothing', async () => {
        const before = await refs();
        const res = await upload({ branch: 'main', projectName: 'web', references: {} }, 'everything');
        assert.equal(res.statusCode, 400);
        assert.equal(res.json().message, 'Something went wrong, please try again later.');
        assert.deepEqual(await refs(), before);
      });
    });

    describe('DELETE of a branch', () => {
      it('deletes the branch in every projectName, or in one, with its removal records', async () => {
        await upload({ branch: 'gone', projectName: 'web', references: { a: [row('a.ts', 1, 'a')], x: [row('x.ts', 1, 'x')] } }, 'branch');
        await upload({ branch: 'gone', projectName: 'web', references: { a: [row('a.ts', 1, 'a')] } }, 'branch');
        await upload({ branch: 'gone', projectName: 'api', references: { a: [row('a.go', 1, 'a')] } }, 'branch');
        const one = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/code-refs?branch=gone&projectName=api`);
        assert.equal(one.statusCode, 200, one.body);
        assert.deepEqual(one.json(), { deleted: 1 });
        assert.equal((await refs('?branch=gone')).length, 1);
        const all = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/code-refs?branch=gone`);
        assert.deepEqual(all.json(), { deleted: 1 });
        assert.deepEqual(await refs('?branch=gone'), []);
        assert.deepEqual(await removals('?branch=gone'), []);
        assert.ok((await refs('?branch=main')).length > 0, 'other branches stay');
      });

      it('requires the branch, and 404s an unknown project', async () => {
        const missing = await ctx().admin('DELETE', `/admin/v1/projects/${project.key}/code-refs`);
        assert.equal(missing.statusCode, 400);
        assert.equal(missing.json().error, true);
        const unknown = await ctx().admin('DELETE', `/admin/v1/projects/nope/code-refs?branch=main`);
        assert.equal(unknown.statusCode, 404);
      });
    });
  },
  {},
  { clock },
);

forEachDialect(
  'stale-flag report',
  (ctx) => {
    let project: ProjectFixture;
    let token: string;
    const upload = (references: Record<string, unknown[]>, branch = 'main') =>
      ctx().app.inject({
        method: 'POST',
        url: '/v1/flags/code-refs',
        headers: { 'content-type': 'application/json', ...keys(project), 'x-api-key': token, 'x-flagpost-scope': 'branch' },
        payload: JSON.stringify({ branch, projectName: 'web', references }),
      });
    const report = async (query = '') => {
      const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/stale-flags${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as {
        codeRefsUploaded: boolean;
        unchangedDays: number;
        flags: Array<{
          slug: string;
          rules: string[];
          removedFromCodeAt: string | null;
          expiredIn: Array<{ key: string }>;
          references: unknown[];
          removals: unknown[];
        }>;
      };
    };
    const rulesOf = (r: Awaited<ReturnType<typeof report>>) => Object.fromEntries(r.flags.map((f) => [f.slug, f.rules]));

    before(async () => {
      project = await createProject(ctx(), 'Hygiene');
      token = await createApiKey(ctx(), project.key);
      await createFlag(ctx(), project.key, { slug: 'live' });
      await createFlag(ctx(), project.key, { slug: 'expired', expiredAt: new Date(now + 5 * DAY).toISOString() });
      await createFlag(ctx(), project.key, { slug: 'retired' });
      await createFlag(ctx(), project.key, { slug: 'never-used' });
    });

    it('applies no rule before any code reference was uploaded, and validates days', async () => {
      const first = await report();
      assert.equal(first.codeRefsUploaded, false);
      assert.equal(first.unchangedDays, 30);
      assert.deepEqual(first.flags, []);
      for (const bad of ['?days=0', '?days=abc', '?days=4000', '?other=1']) {
        const res = await ctx().admin('GET', `/admin/v1/projects/${project.key}/stale-flags${bad}`);
        assert.equal(res.statusCode, 400, bad);
      }
      assert.equal((await ctx().admin('GET', '/admin/v1/projects/nope/stale-flags')).statusCode, 404);
    });

    it('says which rule matched, with the references and the date a flag left the code', async () => {
      await upload({ live: [row('a.ts', 1, 'live')], expired: [row('b.ts', 2, 'expired')], retired: [row('c.ts', 3, 'retired')] });
      now += 10 * DAY;
      await upload({ live: [row('a.ts', 1, 'live')], expired: [row('b.ts', 2, 'expired')] });
      const removedAt = new Date(now).toISOString();
      const r = await report();
      assert.equal(r.codeRefsUploaded, true);
      assert.deepEqual(rulesOf(r), { expired: ['expired_but_referenced'], retired: ['unreferenced'], 'never-used': ['unreferenced'] });
      const expired = r.flags.find((f) => f.slug === 'expired')!;
      assert.deepEqual(
        expired.expiredIn.map((e) => e.key),
        project.environments.map((e) => e.key),
      );
      assert.equal(expired.references.length, 1);
      const retired = r.flags.find((f) => f.slug === 'retired')!;
      assert.equal(retired.removedFromCodeAt, removedAt);
      assert.equal(retired.removals.length, 1);
      assert.equal(r.flags.find((f) => f.slug === 'never-used')!.removedFromCodeAt, null);
    });

    it('matches "unchanged" after N days without a change in any environment', async () => {
      now += 25 * DAY;
      assert.deepEqual(rulesOf(await report('?days=30')), {
        expired: ['expired_but_referenced', 'unchanged'],
        retired: ['unreferenced', 'unchanged'],
        'never-used': ['unreferenced', 'unchanged'],
        live: ['unchanged'],
      });
      const env = project.environments[0]!.key;
      const res = await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${env}/flags/live`, { enabled: true });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(rulesOf(await report('?days=30')).live, undefined);
      assert.deepEqual(rulesOf(await report('?days=40')).retired, ['unreferenced']);
    });
  },
  {},
  { clock },
);
