import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { TestContext } from './context.ts';

const PASSWORD = 'a long test password 0123';

/** A member of `role` with a personal access token, and an admin API call made with it. */
export interface Member {
  id: string;
  email: string;
  token: string;
  call(method: InjectOptions['method'], url: string, body?: unknown): Promise<LightMyRequestResponse>;
}

/** Creates a member (the first one must be an owner), signs in once and creates a personal access token. */
export async function createMember(ctx: TestContext, email: string, role: 'owner' | 'editor' | 'viewer' | 'none'): Promise<Member> {
  const created = await ctx.admin('POST', '/admin/v1/users', { email, password: PASSWORD, role });
  assert.equal(created.statusCode, 201, created.body);
  const signIn = await ctx.app.inject({ method: 'POST', url: '/admin/v1/sessions', payload: { email, password: PASSWORD } });
  assert.equal(signIn.statusCode, 201, signIn.body);
  const cookie = signIn.cookies.map((k) => `${k.name}=${k.value}`).join('; ');
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/admin/v1/me/tokens',
    headers: { cookie, origin: ctx.config.publicUrl },
    payload: { name: `${email} automation`, password: PASSWORD },
  });
  assert.equal(res.statusCode, 201, res.body);
  const token = res.json().token as string;
  return {
    id: created.json().id as string,
    email,
    token,
    call: (method, url, body) =>
      ctx.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
}

/** Gives a member a role on one project (as the admin token, an owner). */
export async function giveProjectRole(ctx: TestContext, member: Member, projectKey: string, role: 'viewer' | 'editor' | 'admin'): Promise<void> {
  const res = await ctx.admin('PUT', `/admin/v1/users/${member.id}/project-roles/${projectKey}`, { role });
  assert.equal(res.statusCode, 200, res.body);
}
