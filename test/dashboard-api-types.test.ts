import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { GENERATED, generatedTypes } from '../dashboard/api-types.ts';

// Issue 22: the dashboard's API types come from the server's /openapi.json (openapi-typescript). When a
// route's schema changes, `npm run api-types` must be run, or this fails: the client cannot drift.

describe('dashboard API types', () => {
  it('are the ones openapi-typescript makes from the current /openapi.json', { timeout: 120_000 }, async () => {
    const expected = await generatedTypes();
    assert.match(expected, /['"]\/admin\/v1\/projects\/\{projectKey\}\/flags\/\{slug\}['"]: \{/, 'the document has the admin routes');
    assert.equal(fs.readFileSync(GENERATED, 'utf8') === expected, true, 'dashboard/src/api.gen.ts is out of date: run npm run api-types');
  });
});
