import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachDialect } from '../support/context.ts';
import { createFlag, createProject, type ProjectFixture } from '../support/fixtures.ts';
import { startSmtpServer } from '../support/forms.ts';
import { createMember, giveProjectRole, type Member } from '../support/members.ts';

// Issue 24: reviewers are told by e-mail (the instance's SMTP_URL) when a change request waits for them,
// the author when it is approved, rejected or applied. A real SMTP server on loopback receives them.

const smtp = await startSmtpServer();
after(() => smtp.close());

/** The subjects received since `from`, by recipient. */
function received(from: number): Array<[string, string]> {
  return smtp.messages
    .slice(from)
    .flatMap((m) => m.to.map((to): [string, string] => [to, /^Subject: (.*)$/m.exec(m.raw)?.[1] ?? '']))
    .sort();
}

forEachDialect(
  'change request notifications',
  (ctx) => {
    let project: ProjectFixture;
    let ann: Member;
    let bob: Member;
    const ok = (res: { statusCode: number; body: string }, status = 200) => {
      assert.equal(res.statusCode, status, res.body);
      return JSON.parse(res.body);
    };

    before(async () => {
      await createMember(ctx(), 'owner@example.com', 'owner');
      ann = await createMember(ctx(), 'ann@example.com', 'editor');
      bob = await createMember(ctx(), 'bob@example.com', 'editor');
      await createMember(ctx(), 'viewer@example.com', 'viewer');
      project = await createProject(ctx());
      // Members with a role on one project only (issue 29 item 7): an editor of this one hears of its
      // requests; an editor and a viewer of another project do not, nor does a viewer of this one.
      const other = await createProject(ctx(), 'Other shop');
      await giveProjectRole(ctx(), await createMember(ctx(), 'pat@example.com', 'none'), project.key, 'editor');
      await giveProjectRole(ctx(), await createMember(ctx(), 'val@example.com', 'none'), project.key, 'viewer');
      await giveProjectRole(ctx(), await createMember(ctx(), 'quinn@example.com', 'none'), other.key, 'admin');
      await createFlag(ctx(), project.key, { slug: 'checkout' });
      ok(await ctx().admin('PATCH', `/admin/v1/projects/${project.key}/environments/${project.environments[2]!.key}`, { protected: true }));
    });

    const deliver = async () => ctx().services.changeScheduler.runOnce();

    it('tells the reviewers of a waiting request (members who may approve in its project only), then its author of the approval and the application', async () => {
      const start = smtp.messages.length;
      const cr = ok(
        await ann.call('POST', `/admin/v1/projects/${project.key}/change-requests`, {
          environment: project.environments[2]!.key,
          title: 'Checkout on',
          flags: [{ slug: 'checkout', values: { enabled: true } }],
          submit: true,
        }),
        201,
      );
      await deliver();
      assert.deepEqual(received(start), [
        ['bob@example.com', '[Flagpost] Review requested: Checkout on'],
        ['owner@example.com', '[Flagpost] Review requested: Checkout on'],
        ['pat@example.com', '[Flagpost] Review requested: Checkout on'],
      ]);
      // Quoted-printable: soft line breaks joined.
      const mail = smtp.messages[start]!.raw.replace(/=\r\n/g, '');
      assert.match(mail, new RegExp(`/projects/${project.key}/changes/${cr.id}`));
      const url = `/admin/v1/projects/${project.key}/change-requests/${cr.id}`;
      const afterReview = smtp.messages.length;
      ok(await bob.call('POST', `${url}/approve`, { revision: 1 }));
      ok(await bob.call('POST', `${url}/apply`));
      await deliver();
      assert.deepEqual(received(afterReview), [
        ['ann@example.com', '[Flagpost] Applied: Checkout on'],
        ['ann@example.com', '[Flagpost] Approved: Checkout on'],
      ]);
      await deliver();
      assert.equal(smtp.messages.length, afterReview + 2, 'each sent once');
    });

    it('tells the author of a rejection', async () => {
      const cr = ok(
        await ann.call('POST', `/admin/v1/projects/${project.key}/change-requests`, {
          environment: project.environments[2]!.key,
          title: 'Checkout off',
          flags: [{ slug: 'checkout', values: { enabled: false } }],
          submit: true,
        }),
        201,
      );
      await deliver();
      const start = smtp.messages.length;
      ok(await bob.call('POST', `/admin/v1/projects/${project.key}/change-requests/${cr.id}/reject`));
      await deliver();
      assert.deepEqual(received(start), [['ann@example.com', '[Flagpost] Rejected: Checkout off']]);
    });
  },
  { SMTP_URL: smtp.url },
);
