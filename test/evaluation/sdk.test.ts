import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { before, it } from 'node:test';
import { FlagsSDK } from '@basestack/flags-js';
import { forEachDialect } from '../support/context.ts';
import { createApiKey, createFlag, createProject, type ProjectFixture, sampleDoc } from '../support/fixtures.ts';

// The original service's published SDK, unchanged, against a real socket (issue 2 "Done when").
forEachDialect('@basestack/flags-js 1.2.1 against Flagpost', (ctx) => {
  let project: ProjectFixture;
  let baseURL: string;
  let apiKey: string;
  const sdk = (extra: Record<string, unknown> = {}) =>
    new FlagsSDK({ baseURL, projectKey: project.key, environmentKey: project.environments[0]!.key, cache: { enabled: false }, ...extra });

  before(async () => {
    await ctx().app.listen({ port: 0, host: '127.0.0.1' });
    baseURL = `http://127.0.0.1:${(ctx().app.server.address() as AddressInfo).port}/v1`;
    project = await createProject(ctx());
    apiKey = await createApiKey(ctx(), project.key);
    await createFlag(ctx(), project.key, { slug: 'header', enabled: true, payload: { variant: 'b' }, description: 'Header' });
    await createFlag(ctx(), project.key, { slug: 'beta', enabled: true, isPreview: true, previewName: 'Beta', previewContent: sampleDoc });
  });

  it('reads one flag', async () => {
    const flag = await sdk().getFlag('header');
    assert.deepEqual(flag, { slug: 'header', enabled: true, payload: { variant: 'b' }, expiredAt: null, description: 'Header' });
  });

  it('treats a missing flag as disabled', async () => {
    const flag = (await sdk().getFlag('missing')) as unknown as { enabled: boolean; error: boolean; errorMessage: string };
    assert.equal(flag.enabled, false);
    assert.equal(flag.error, true);
    assert.equal(flag.errorMessage, 'Flag with slug missing does not exist');
  });

  it('reads all flags', async () => {
    const { flags } = (await sdk().getAllFlags()) as unknown as { flags: Array<{ slug: string; createdAt: string }> };
    assert.deepEqual(
      flags.map((f) => f.slug),
      ['beta', 'header'],
    );
    assert.ok(flags.every((f) => typeof f.createdAt === 'string'));
  });

  it('reads the preview flags', async () => {
    const { flags } = (await sdk().getPreviewFlags()) as unknown as { flags: Array<{ slug: string; previewContent: string }> };
    assert.equal(flags.length, 1);
    assert.equal(flags[0]!.slug, 'beta');
    assert.match(flags[0]!.previewContent, /^<p>/);
  });

  it('submits preview feedback', async () => {
    const result = await sdk().submitPreviewFeedback({ flagKey: 'beta', mood: 'VERY_HAPPY', rating: 5, description: 'Love it', metadata: { from: 'sdk' } });
    assert.equal(result.success, true);
    assert.equal(typeof result.feedbackId, 'string');
    await assert.rejects(sdk().submitPreviewFeedback({ flagKey: 'header', mood: 'SAD', rating: 2 }), /Preview flag with key header does not exist/);
  });

  it('submits code references', async () => {
    const result = await sdk({ apiKey }).submitCodeReferences({
      branch: 'main',
      projectName: 'web',
      references: { header: [{ filePath: 'src/App.tsx', lineNumber: 12, lineContent: "sdk.getFlag('header')" }] },
    });
    assert.equal(result.success, true);
    assert.equal(typeof result.message, 'string');
    const stored = await ctx().admin('GET', `/admin/v1/projects/${project.key}/code-refs?slug=header`);
    assert.equal(stored.json().references[0].filePath, 'src/App.tsx');
    await assert.rejects(sdk({ apiKey: 'fpk_wrong' }).submitCodeReferences({ branch: 'main', projectName: 'web', references: {} }), /Invalid API Key/);
  });

  it('initialises by loading all flags', async () => {
    const client = sdk({ cache: { enabled: true } });
    await client.init();
    assert.equal((await client.getFlag('header')).enabled, true);
  });
});
