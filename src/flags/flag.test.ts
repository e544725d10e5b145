import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyFlagValues, byNewest, type Flag, listedFlag, previewFlag, publicFlag } from './flag.ts';

const flag: Flag = {
  id: '01A',
  version: 1,
  projectId: 'p',
  environmentId: 'e',
  slug: 's',
  type: 'boolean',
  enabled: true,
  targeting: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on', prerequisites: [], rules: [] },
  payload: { a: 1 },
  expiredAt: null,
  description: 'd',
  isPreview: true,
  previewName: 'n',
  previewContent: { type: 'doc', content: [] },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
};

describe('flag rules', () => {
  it('keeps absent values and clears null ones (PATCH semantics)', () => {
    const next = applyFlagValues(flag, { enabled: false, payload: null, description: null }, 'now', () => 'id');
    assert.equal(next.enabled, false);
    assert.equal(next.payload, null);
    assert.equal(next.description, '');
    assert.equal(next.previewName, 'n');
    assert.equal(next.updatedAt, 'now');
    assert.equal(flag.enabled, true, 'the input is not changed');
  });

  it('normalizes expiry dates to UTC', () => {
    assert.equal(applyFlagValues(flag, { expiredAt: '2030-06-01T12:00:00+02:00' }, 'now', () => 'id').expiredAt, '2030-06-01T10:00:00.000Z');
  });

  it('shapes the three public views exactly as the specification lists them', () => {
    assert.deepEqual(Object.keys(publicFlag(flag)), ['slug', 'enabled', 'payload', 'expiredAt', 'description']);
    assert.deepEqual(Object.keys(listedFlag(flag)), ['slug', 'enabled', 'payload', 'expiredAt', 'description', 'createdAt', 'updatedAt']);
    assert.deepEqual(Object.keys(previewFlag(flag, '<p></p>')), ['slug', 'enabled', 'isPreview', 'previewName', 'previewContent', 'expiredAt', 'createdAt']);
  });

  it('orders newest first, ties broken by id', () => {
    const a = { ...flag, id: '01A', createdAt: '2026-01-01T00:00:00.000Z' };
    const b = { ...flag, id: '01B', createdAt: '2026-01-01T00:00:00.000Z' };
    const c = { ...flag, id: '01C', createdAt: '2025-01-01T00:00:00.000Z' };
    assert.deepEqual(
      [c, a, b].sort(byNewest).map((f) => f.id),
      ['01B', '01A', '01C'],
    );
  });
});
