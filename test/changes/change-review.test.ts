import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';
import { createMember, type Member } from '../support/members.ts';

// Issue 29 items 1, 4 and 10: an approval is of one revision, by a member who wrote none of the request
// since its approvals were last reset; flags as code never rewrites another actor's request; viewers read
// change requests without members' e-mail addresses or token names.

type Doc = Record<string, any>;

const ok = (res: { statusCode: number; body: string }, status = 200): Doc => {
  assert.equal(res.statusCode, status, res.body);
  return JSON.parse(res.body) as Doc;
};

forEachDialect('change request review', (ctx) => {
  let project: ProjectFixture;
  let owner: Member;
  let ann: Member;
  let bob: Member;
  let cy: Member;
  let viewer: Member;
  const base = () => `/admin/v1/projects/${project.key}`;
  const prod = () => project.environments[2]!.key;

  /** A request by `author` in production (protected, `requiredApprovals` as set), submitted. */
  const propose = async (author: Member, title: string, values: Doc): Promise<string> => {
    const created = ok(
      await author.call('POST', `${base()}/change-requests`, { environment: prod(), title, flags: [{ slug: 'checkout', values }], submit: true }),
      201,
    );
    return `${base()}/change-requests/${created.id}`;
  };
  const setApprovals = async (requiredApprovals: number) =>
    ok(await owner.call('PATCH', `${base()}/environments/${prod()}`, { protected: true, requiredApprovals }));

  before(async () => {
    owner = await createMember(ctx(), 'owner@example.com', 'owner');
    ann = await createMember(ctx(), 'ann@example.com', 'editor');
    bob = await createMember(ctx(), 'bob@example.com', 'editor');
    cy = await createMember(ctx(), 'cy@example.com', 'editor');
    viewer = await createMember(ctx(), 'viewer@example.com', 'viewer');
    project = await createProject(ctx());
    await createFlag(ctx(), project.key, { slug: 'checkout' });
    await setApprovals(1);
  });

  it('refuses the approval of an editor who rewrote someone else’s request, so that nobody applies their own change alone', async () => {
    const cr = await propose(ann, 'Checkout on', { enabled: true });
    // Bob rewrites Ann's request into his own change, then tries to approve and apply it.
    const rewritten = ok(await bob.call('PATCH', cr, { flags: [{ slug: 'checkout', values: { enabled: true, payload: { price: 0 } } }] }));
    assert.equal(rewritten.revision, 2);
    assert.deepEqual(
      rewritten.revisions.map((r: Doc) => [r.revision, r.author.split(' ')[0], r.approvalsReset]),
      [
        [1, 'ann@example.com', false],
        [2, 'bob@example.com', false],
      ],
    );
    // The request names whom it refuses (the dashboard offers them no Approve, issue 31 item 5).
    assert.deepEqual([...rewritten.cannotApprove].sort(), [ann.id, bob.id].sort());
    const refused = await bob.call('POST', `${cr}/approve`, { revision: 2 });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(refused.json().message, 'Who wrote a revision of a change request since its approvals were last reset cannot approve it');
    assert.equal((await bob.call('POST', `${cr}/apply`)).statusCode, 409, 'not approved');
    // Someone who wrote nothing of it approves it.
    assert.equal(ok(await cy.call('POST', `${cr}/approve`, { revision: 2 })).status, 'approved');
    ok(await cy.call('POST', `${cr}/cancel`));
  });

  it('with two approvals needed, keeps whoever wrote a revision since the last reset from being one of the two', async () => {
    await setApprovals(2);
    const cr = await propose(ann, 'Checkout on, twice reviewed', { enabled: true });
    ok(await cy.call('POST', `${cr}/approve`, { revision: 1 }));
    // Bob's rewrite resets Cy's approval; then Bob would supply one of the two.
    ok(await bob.call('PATCH', cr, { flags: [{ slug: 'checkout', values: { enabled: true, description: 'bob' } }] }));
    assert.equal((await bob.call('POST', `${cr}/approve`, { revision: 2 })).statusCode, 403);
    ok(await cy.call('POST', `${cr}/approve`, { revision: 2 }));
    assert.equal(ok(await owner.call('POST', `${cr}/approve`, { revision: 2 })).status, 'approved', 'two members who wrote nothing');
    // A draft rewritten by Bob and touched up by Ann: Bob's changes are still there, he may not approve.
    const draft = ok(
      await ann.call('POST', `${base()}/change-requests`, { environment: prod(), title: 'Draft', flags: [{ slug: 'checkout', values: { enabled: true } }] }),
      201,
    );
    const url = `${base()}/change-requests/${draft.id}`;
    ok(await bob.call('PATCH', url, { flags: [{ slug: 'checkout', values: { enabled: true, description: 'bob' } }] }));
    ok(await ann.call('PATCH', url, { flags: [{ slug: 'checkout', values: { enabled: true, description: 'ann' } }] }));
    ok(await ann.call('POST', `${url}/submit`));
    assert.equal((await bob.call('POST', `${url}/approve`, { revision: 3 })).statusCode, 403);
    ok(await owner.call('POST', `${cr}/cancel`));
    ok(await owner.call('POST', `${url}/cancel`));
    await setApprovals(1);
  });

  it('binds an approval to the revision the reviewer saw: a newer one answers 409 and changes nothing', async () => {
    const cr = await propose(ann, 'Checkout payload', { payload: { v: 1 } });
    const seen = ok(await cy.call('GET', cr));
    assert.equal(seen.revision, 1);
    ok(await ann.call('PATCH', cr, { flags: [{ slug: 'checkout', values: { payload: { v: 2 } } }] }));
    const stale = await cy.call('POST', `${cr}/approve`, { revision: seen.revision });
    assert.equal(stale.statusCode, 409, stale.body);
    assert.equal(stale.json().message, 'The change request is at revision 2, not 1: review it again before approving');
    const after = ok(await cy.call('GET', cr));
    assert.deepEqual([after.status, after.approvals], ['in_review', []]);
    assert.equal((await cy.call('POST', `${cr}/approve`, {})).statusCode, 400, 'an approval names a revision');
    assert.equal(ok(await cy.call('POST', `${cr}/approve`, { revision: 2 })).status, 'approved');
    const audit = ok(await ctx().admin('GET', `/admin/v1/audit?project=${project.key}&entity=change_request&entityId=${after.id}`));
    assert.deepEqual(audit.entries.find((e: Doc) => e.action === 'change_request.approved').changes.revision, { after: 2 });
    ok(await cy.call('POST', `${cr}/cancel`));
  });

  it('keeps what an applied request changed: its differences are against what it replaced, not the configuration now', async () => {
    const cr = await propose(ann, 'Checkout described', { description: 'applied by review' });
    ok(await cy.call('POST', `${cr}/approve`, { revision: 1 }));
    const applied = ok(await cy.call('POST', `${cr}/apply`));
    assert.equal(applied.status, 'applied');
    const expected = [{ field: 'description', from: '', to: 'applied by review' }];
    assert.deepEqual([applied.changes[0].differencesOf, applied.changes[0].differences], ['applied', expected]);
    // A later write does not change what the request did.
    ok(await owner.call('PATCH', `${base()}/environments/${prod()}/flags/checkout?bypassProtection=true`, { description: 'later' }));
    const later = ok(await viewer.call('GET', cr));
    assert.deepEqual([later.changes[0].differencesOf, later.changes[0].differences], ['applied', expected]);
  });

  it('opens a second change request when another actor applies a document, instead of rewriting the first actor’s', async () => {
    const doc = ok(await ctx().admin('GET', `${base()}/document`));
    const production = project.environments[2]!.name;
    const applyAs = async (who: Member, description: string) => {
      const wanted = structuredClone(doc);
      wanted.flags.checkout.environments[production].description = description;
      return ok(await who.call('POST', '/admin/v1/documents/apply', { document: wanted, projectKey: project.key, source: 'shop.yaml' }));
    };
    const first = await applyAs(ann, 'by ann');
    assert.equal(first.changeRequests[0].outcome, 'opened');
    const annRequest = `${base()}/change-requests/${first.changeRequests[0].id}`;
    const again = await applyAs(ann, 'by ann, again');
    assert.deepEqual([again.changeRequests[0].outcome, again.changeRequests[0].id], ['updated', first.changeRequests[0].id], 'her own request is updated');
    const second = await applyAs(bob, 'by bob');
    assert.equal(second.changeRequests[0].outcome, 'opened');
    assert.notEqual(second.changeRequests[0].id, first.changeRequests[0].id);
    const annView = ok(await cy.call('GET', annRequest));
    assert.equal(annView.changes[0].config.description, 'by ann, again', "Ann's request is as she left it");
    assert.deepEqual(
      annView.revisions.map((r: Doc) => r.revision),
      [1, 2],
    );
    // Bob wrote nothing of Ann's request: he may review it.
    assert.equal(ok(await bob.call('POST', `${annRequest}/approve`, { revision: 2 })).status, 'approved');
    ok(await owner.call('POST', `${annRequest}/cancel`));
    ok(await owner.call('POST', `${base()}/change-requests/${second.changeRequests[0].id}/cancel`));
  });

  it('shows viewers change requests without e-mail addresses or token names, and editors with them', async () => {
    const cr = await propose(ann, 'Checkout for viewers', { enabled: true });
    ok(await bob.call('PATCH', cr, { flags: [{ slug: 'checkout', values: { enabled: true, description: 'x' } }] }));
    ok(await bob.call('POST', `${cr}/comments`, { body: 'Looks right' }));
    ok(await cy.call('POST', `${cr}/approve`, { revision: 2 }));
    const asEditor = ok(await cy.call('GET', cr));
    assert.match(JSON.stringify(asEditor), /ann@example\.com/);
    assert.match(asEditor.approvals[0].label, /cy@example\.com/);
    const asViewer = ok(await viewer.call('GET', cr));
    const text = JSON.stringify(asViewer);
    assert.doesNotMatch(text, /@example\.com|automation/, text);
    assert.equal(asViewer.author, "a member's access token");
    assert.deepEqual(
      asViewer.revisions.map((r: Doc) => r.author),
      ["a member's access token", "a member's access token"],
    );
    assert.deepEqual([asViewer.approvals[0].label, asViewer.approvals[0].userId], ['a member', cy.id]);
    assert.equal(asViewer.comments[0].author, 'a member');
    const list = ok(await viewer.call('GET', `${base()}/change-requests`));
    assert.doesNotMatch(JSON.stringify(list), /@example\.com|automation/);
    assert.match(JSON.stringify(ok(await cy.call('GET', `${base()}/change-requests`))), /ann@example\.com/);
    ok(await cy.call('POST', `${cr}/cancel`));
  });
});
