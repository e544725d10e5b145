import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newId, nowIso } from '../../src/db/codec.ts';
import { DomainEvents } from '../../src/events/index.ts';
import { OutboxService, OutboxStore } from '../../src/submissions/index.ts';
import type { Submission } from '../../src/submissions/submission.ts';
import { SubmissionStore } from '../../src/submissions/submission.store.ts';
import { SubmissionWriter } from '../../src/submissions/submission-writer.ts';
import { forEachDialect } from '../support/context.ts';
import { createForm, submitJson } from '../support/forms.ts';

forEachDialect('group commit of submissions (contract D18)', (ctx) => {
  it('commits concurrent submissions together and answers each once it is stored', async (t) => {
    const form = await createForm(ctx());
    const commitsBefore = ctx().services.submissionIntake.commitCount;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => submitJson(ctx(), form.key, { n: i })));
    assert.ok(answers.every((a) => a.statusCode === 200));
    const commits = ctx().services.submissionIntake.commitCount - commitsBefore;
    t.diagnostic(`40 concurrent submissions took ${commits} commits`);
    // One commit per submission would be 40: grouping is what this test is about.
    assert.ok(commits >= 1 && commits <= 10, `${commits} commits for 40 submissions`);
    const stored = await ctx().handle.db.selectFrom('submissions').select('id').execute();
    const ids = new Set(stored.map((r) => r.id));
    for (const answer of answers) assert.ok(ids.has(answer.json().id), 'every answered submission is committed');
  });

  it('rolls back only the submission that fails in a batch', async () => {
    const form = await createForm(ctx());
    const { id: formId } = await ctx().handle.db.selectFrom('forms').select('id').where('key', '=', form.key).executeTakeFirstOrThrow();
    const { db, dialect } = ctx().handle;
    const writer = new SubmissionWriter({
      db,
      store: new SubmissionStore(),
      outbox: new OutboxService(db, new OutboxStore(dialect)),
      events: new DomainEvents(),
      files: ctx().services.files,
    });
    const submission = (id: string, n: number): Submission => ({
      id,
      formId,
      data: { n },
      files: [],
      spam: false,
      spamReasons: [],
      meta: { ip: null, userAgent: null, referer: null, origin: null },
      createdAt: nowIso(),
    });
    const taken = newId();
    await writer.write({ submission: submission(taken, 0), formKey: form.key, files: [], deliveries: [] });
    const first = newId();
    const third = newId();
    const results = await Promise.allSettled([
      writer.write({ submission: submission(first, 1), formKey: form.key, files: [], deliveries: [] }),
      writer.write({ submission: submission(taken, 2), formKey: form.key, files: [], deliveries: [] }), // duplicate id
      writer.write({
        submission: submission(third, 3),
        formKey: form.key,
        files: [],
        deliveries: [{ kind: 'webhook', target: 'http://127.0.0.1:9/hook', payload: '{}' }],
      }),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(writer.commitCount, 2, 'the first write alone, then the three in one transaction');
    const rows = await db.selectFrom('submissions').select(['id', 'data']).where('form_id', '=', formId).execute();
    assert.deepEqual(new Set(rows.map((r) => r.id)), new Set([taken, first, third]));
    assert.equal(JSON.parse(rows.find((r) => r.id === taken)!.data).n, 0, 'the stored submission is untouched');
    const queued = await db.selectFrom('outbox').select('submission_id').where('submission_id', '=', third).execute();
    assert.equal(queued.length, 1, 'the delivery of a batched submission is committed with it');
  });
});
