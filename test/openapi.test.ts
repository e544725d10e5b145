import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { forEachDialect } from './support/context.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options'];

/** The endpoints docs/api.md documents: its `### METHOD /path` headings. */
function documentedEndpoints(): string[] {
  const text = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/api.md'), 'utf8');
  return [...text.matchAll(/^### (GET|POST|PATCH|PUT|DELETE|OPTIONS) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
}

forEachDialect('GET /openapi.json', (ctx) => {
  it('serves a valid OpenAPI 3.1 document', async () => {
    const res = await ctx().app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /application\/json/);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
  });

  it('names every endpoint of docs/api.md and nothing undocumented', async () => {
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const served = Object.entries(doc.paths).flatMap(([url, item]) =>
      Object.keys(item)
        .filter((method) => METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${url}`),
    );
    const documented = documentedEndpoints();
    assert.equal(new Set(documented).size, documented.length, 'an endpoint is documented twice');
    assert.deepEqual([...documented].sort(), [...served].sort());
  });

  it('describes every admin route with its token, parameters and answers', async () => {
    type Operation = { summary?: string; responses?: object; parameters?: Array<{ in: string; name: string }>; security?: unknown };
    const doc = (await ctx().app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>> };
    for (const [url, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        assert.ok(operation.summary, `${method} ${url} has a summary`);
        assert.ok(Object.keys(operation.responses ?? {}).length > 0, `${method} ${url} describes its answers`);
        for (const name of url.match(/\{(\w+)\}/g) ?? []) {
          assert.ok(
            operation.parameters?.some((p) => p.in === 'path' && `{${p.name}}` === name),
            `${method} ${url} describes the path parameter ${name}`,
          );
        }
        // Sign-in and accepting an invitation are the admin routes that take their credential in the body;
        // single sign-on's routes need none (the provider's answer is the credential).
        const signIn = (method === 'post' && (url === '/admin/v1/sessions' || url === '/admin/v1/invitations/accept')) || url.startsWith('/admin/v1/sso');
        if (url.startsWith('/admin/')) assert.deepEqual(operation.security, signIn ? [] : [{ adminToken: [] }, { dashboardSession: [] }], `${method} ${url}`);
      }
    }
  });
});
