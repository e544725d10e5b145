import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  approvalRefusal,
  type ChangeAction,
  type ChangeStatus,
  canonicalJson,
  differences,
  isLate,
  refusalOf,
  type Revision,
  sameActor,
  statusAfter,
} from './change.ts';

describe('change request rules', () => {
  // [action, status, approvals, required, refusal (or the status after)]
  const rows: Array<[ChangeAction, ChangeStatus, number, number, string]> = [
    ['submit', 'draft', 0, 2, 'in_review'],
    ['submit', 'draft', 0, 0, 'approved'],
    ['submit', 'in_review', 0, 2, 'refused: state'],
    ['approve', 'in_review', 0, 2, 'in_review'],
    ['approve', 'in_review', 1, 2, 'approved'],
    ['approve', 'draft', 0, 1, 'refused: state'],
    ['approve', 'applied', 1, 1, 'refused: state'],
    ['apply', 'in_review', 1, 2, 'refused: approvals'],
    ['apply', 'approved', 2, 2, 'applied'],
    ['apply', 'draft', 0, 0, 'applied'],
    ['apply', 'scheduled', 2, 2, 'refused: state'],
    ['apply', 'applied', 2, 2, 'refused: state'],
    ['apply', 'rejected', 2, 2, 'refused: state'],
    ['apply', 'cancelled', 0, 0, 'refused: state'],
    ['schedule', 'in_review', 0, 1, 'refused: approvals'],
    ['schedule', 'approved', 1, 1, 'scheduled'],
    ['schedule', 'scheduled', 1, 1, 'scheduled'],
    ['schedule', 'draft', 0, 0, 'scheduled'],
    ['unschedule', 'scheduled', 1, 1, 'approved'],
    ['unschedule', 'scheduled', 0, 1, 'in_review'],
    ['unschedule', 'approved', 1, 1, 'refused: state'],
    ['edit', 'approved', 0, 2, 'in_review'],
    ['edit', 'scheduled', 0, 2, 'in_review'],
    ['edit', 'scheduled', 0, 0, 'scheduled'],
    ['edit', 'draft', 0, 2, 'draft'],
    ['edit', 'applied', 0, 2, 'refused: state'],
    ['edit', 'cancelled', 0, 2, 'refused: state'],
    ['reject', 'in_review', 0, 1, 'rejected'],
    ['reject', 'scheduled', 1, 1, 'rejected'],
    ['reject', 'draft', 0, 1, 'refused: state'],
    ['cancel', 'scheduled', 1, 1, 'cancelled'],
    ['cancel', 'applied', 1, 1, 'refused: state'],
    ['comment', 'applied', 0, 1, 'applied'],
  ];
  for (const [action, status, approvals, required, expected] of rows) {
    it(`${action} on ${status} with ${approvals}/${required} approvals: ${expected}`, () => {
      const facts = { status, approvals, required };
      const refusal = refusalOf(action, facts);
      assert.equal(refusal ? `refused: ${refusal.reason}` : statusAfter(action, facts), expected);
    });
  }

  it('lets members other than the author approve, never the author or the admin token', () => {
    assert.equal(approvalRefusal({ type: 'user', id: 'u1' }, [], { memberId: 'u2' }), undefined);
    assert.equal(approvalRefusal({ type: 'access_token', id: 'u1' }, [], { memberId: 'u1' }), 'own_request');
    assert.equal(approvalRefusal({ type: 'user', id: 'u1' }, [], { memberId: null }), 'not_member');
    assert.equal(approvalRefusal({ type: 'admin_token', id: null }, [], { memberId: 'u1' }), undefined);
  });

  const by = (revision: number, id: string | null, approvalsReset = false): Revision => ({
    revision,
    author: { type: id === null ? 'admin_token' : 'user', id, label: id ?? 'admin token' },
    approvalsReset,
  });
  // [revisions, approver, refusal]: the author of the request is u1 throughout.
  const revisionRows: Array<[string, Revision[], string, string | undefined]> = [
    ['a rewrite of the request by another', [by(1, 'u1'), by(2, 'u2', true)], 'u2', 'own_revision'],
    ['a rewrite of a draft, then an edit by the author', [by(1, 'u1'), by(2, 'u2'), by(3, 'u1')], 'u2', 'own_revision'],
    ['a rewrite before the last reset', [by(1, 'u1'), by(2, 'u2', true), by(3, 'u3', true)], 'u2', undefined],
    ['a rewrite before the last reset, by the last writer', [by(1, 'u1'), by(2, 'u2', true), by(3, 'u3', true)], 'u3', 'own_revision'],
    ['a reviewer who wrote nothing', [by(1, 'u1'), by(2, 'u2', true)], 'u3', undefined],
    ['a revision by the admin token', [by(1, 'u1'), by(2, null, true)], 'u3', undefined],
  ];
  for (const [name, revisions, approver, expected] of revisionRows) {
    it(`approval by ${approver} after ${name}: ${expected ?? 'allowed'}`, () => {
      assert.equal(approvalRefusal({ type: 'user', id: 'u1' }, revisions, { memberId: approver }), expected);
    });
  }

  it('knows a member through a session or a token as one actor, and the admin token as itself', () => {
    assert.equal(sameActor({ type: 'user', id: 'u1', label: 'a' }, { type: 'access_token', id: 'u1', label: 'b' }), true);
    assert.equal(sameActor({ type: 'user', id: 'u1', label: 'a' }, { type: 'user', id: 'u2', label: 'a' }), false);
    assert.equal(sameActor({ type: 'admin_token', id: null, label: 'admin token' }, { type: 'admin_token', id: null, label: 'admin token' }), true);
    assert.equal(sameActor({ type: 'admin_token', id: null, label: 'admin token' }, { type: 'user', id: 'u1', label: 'a' }), false);
  });

  it('calls an application late from a minute after its time', () => {
    assert.equal(isLate('2026-01-01T00:00:00.000Z', new Date('2026-01-01T00:00:59.999Z')), false);
    assert.equal(isLate('2026-01-01T00:00:00.000Z', new Date('2026-01-01T00:01:00.000Z')), true);
  });

  it('compares configurations field by field, whatever the key order of objects', () => {
    const a: Record<string, unknown> = { variants: { on: true, off: false }, rules: [1, 2], payload: null };
    const b = { variants: { off: false, on: true }, rules: [2, 1], payload: { x: 1 } };
    assert.deepEqual(differences(a, b, ['variants', 'rules', 'payload']), [
      { field: 'rules', from: [1, 2], to: [2, 1] },
      { field: 'payload', from: null, to: { x: 1 } },
    ]);
    assert.equal(canonicalJson({ b: 1, a: { d: 1, c: 2 } }), '{"a":{"c":2,"d":1},"b":1}');
  });
});
