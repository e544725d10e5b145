import assert from 'node:assert/strict';
import type { TestContext } from './context.ts';

export interface ProjectFixture {
  key: string;
  name: string;
  environments: Array<{ key: string; name: string }>;
}

export async function createProject(ctx: TestContext, name = 'Shop'): Promise<ProjectFixture> {
  const res = await ctx.admin('POST', '/admin/v1/projects', { name });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export async function createFlag(ctx: TestContext, projectKey: string, body: Record<string, unknown>) {
  const res = await ctx.admin('POST', `/admin/v1/projects/${projectKey}/flags`, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

export async function createApiKey(ctx: TestContext, projectKey: string): Promise<string> {
  const res = await ctx.admin('POST', `/admin/v1/projects/${projectKey}/api-keys`, { name: 'ci' });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().token;
}

/** Key headers of one environment of a project. */
export function keys(project: ProjectFixture, envIndex = 0): Record<string, string> {
  return { 'x-project-key': project.key, 'x-environment-key': project.environments[envIndex]!.key };
}

export const sampleDoc = {
  type: 'doc',
  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Try the <new> checkout', marks: [{ type: 'bold' }] }] }],
};
