import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { NamedLocks } from '../../src/db/named-lock.ts';
import type { TimedJob } from '../../src/delivery/index.ts';
import { RetentionJob, SubmissionStore } from '../../src/submissions/index.ts';
import { ADMIN_TOKEN, createTestDatabase, dialects, startInstance, type TestDatabase } from '../support/context.ts';
import { multipart, startWebhookReceiver } from '../support/forms.ts';

// Issue 12: retention. Submissions older than their form's retentionDays are deleted with their files
// and delivery records by the retention job, in batches, while new submissions keep arriving; files
// go after delivery where a form asks for it; two PostgreSQL instances never delete twice or fight.
// Time comes from the clock port.

const DAY = 86_400_000;

for (const dialect of dialects()) {
  describe(`retention [${dialect}]`, () => {
    let now = Date.parse('2026-11-22T10:00:00.000Z');
    const clock = () => new Date(now);
    let database: TestDatabase;
    let a: Awaited<ReturnType<typeof startInstance>>;
    let b: Awaited<ReturnType<typeof startInstance>> | undefined;
    const env = { FLAGPOST_RETENTION_INTERVAL_MS: '0', FLAGPOST_OUTBOX_POLL_MS: '0', FLAGPOST_WEBHOOK_TARGETS: 'private', FLAGPOST_RATE_LIMIT_MAX: '0' };
    const job = (instance: typeof a, batch: number) =>
      new RetentionJob({
        db: instance.handle.db,
        dialect,
        store: new SubmissionStore(),
        forms: instance.services.forms,
        files: instance.services.files,
        clock,
        log: pino({ level: 'silent' }),
        batch,
      });
    const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
      a.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
    const submit = (key: string, n: number): Promise<LightMyRequestResponse> =>
      a.app.inject({ method: 'POST', url: `/v1/s/${key}?mode=rest`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ n }) });
    const submitFile = (key: string) => {
      const body = multipart([
        { name: 'n', value: 'file' },
        { name: 'cv', filename: 'cv.txt', content: 'curriculum' },
      ]);
      return a.app.inject({ method: 'POST', url: `/v1/s/${key}?mode=rest`, headers: { 'content-type': body.contentType }, payload: body.payload });
    };
    const countOf = async (formId: string) =>
      Number(
        (
          await a.handle.db
            .selectFrom('submissions')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('form_id', '=', formId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const formId = async (key: string) => (await a.handle.db.selectFrom('forms').select('id').where('key', '=', key).executeTakeFirstOrThrow()).id;

    before(async () => {
      database = await createTestDatabase(dialect);
      a = await startInstance(database, env, { clock });
      if (dialect === 'postgres') b = await startInstance(database, env, { clock });
    });
    after(async () => {
      for (const instance of [a, b]) {
        await instance?.app.close();
        await instance?.services.stop();
        await instance?.handle.close();
      }
      await database.drop();
    });

    it('deletes submissions past the retention with their files, in batches, while new ones arrive', { timeout: 120_000 }, async () => {
      const kept = (await admin('POST', '/admin/v1/forms', { name: 'Kept forever', uploadsEnabled: true })).json() as { key: string };
      const month = (await admin('POST', '/admin/v1/forms', { name: 'A month', uploadsEnabled: true, retentionDays: 30 })).json() as {
        key: string;
        retentionDays: number;
      };
      assert.equal(month.retentionDays, 30);
      const base = now;
      now = base - 40 * DAY;
      for (let i = 0; i < 220; i++) assert.equal((await submit(month.key, i)).statusCode, 200);
      for (let i = 0; i < 10; i++) assert.equal((await submitFile(month.key)).statusCode, 200);
      for (let i = 0; i < 20; i++) await submit(kept.key, i);
      now = base - 29 * DAY; // inside the month: stays
      for (let i = 0; i < 5; i++) await submit(month.key, i);
      now = base;
      const monthId = await formId(month.key);
      assert.equal(await countOf(monthId), 235);

      const [round] = await Promise.all([job(a, 50).runOnce(), ...Array.from({ length: 30 }, (_, i) => submit(month.key, 1000 + i))]);
      assert.equal(round.deleted, 230);
      assert.equal(round.batches, 5, '230 in batches of 50');
      assert.equal(await countOf(monthId), 35, 'the 5 recent and the 30 that arrived meanwhile');
      assert.equal(await countOf(await formId(kept.key)), 20, 'a form without retention keeps everything');
      assert.equal((await a.handle.db.selectFrom('submission_files').select('id').execute()).length, 0, 'the files went with their submissions');
      const again = await job(a, 50).runOnce();
      assert.equal(again.deleted, 0);
    });

    it('deletes the files of a submission once all its deliveries succeeded, where the form asks for it', async () => {
      const receiver = await startWebhookReceiver();
      try {
        const form = (
          await admin('POST', '/admin/v1/forms', {
            name: 'Files after delivery',
            uploadsEnabled: true,
            webhookUrl: receiver.url,
            deleteFilesAfterDelivery: true,
          })
        ).json() as {
          key: string;
        };
        const undelivered = (
          await admin('POST', '/admin/v1/forms', {
            name: 'Undelivered',
            uploadsEnabled: true,
            webhookUrl: 'http://127.0.0.1:9/hook',
            deleteFilesAfterDelivery: true,
          })
        ).json() as {
          key: string;
        };
        const delivered = (await submitFile(form.key)).json().id as string;
        const pending = (await submitFile(undelivered.key)).json().id as string;
        await a.services.outbox.runOnce();
        const round = await job(a, 50).runOnce();
        assert.equal(round.filesDeleted, 1);
        const files = await a.handle.db.selectFrom('submission_files').select('submission_id').execute();
        assert.deepEqual(
          files.map((f) => f.submission_id),
          [pending],
          'only the delivered submission lost its file',
        );
        const detail = (await admin('GET', `/admin/v1/forms/${form.key}/submissions/${delivered}`)).json();
        assert.deepEqual(detail.files, []);
        assert.equal(detail.deliveries[0].status, 'delivered');
      } finally {
        await receiver.close();
      }
    });

    it('runs on one PostgreSQL instance at a time: two instances never delete twice or fight', { skip: dialect !== 'postgres' }, async () => {
      const form = (await admin('POST', '/admin/v1/forms', { name: 'Two instances', retentionDays: 1 })).json() as { key: string };
      const base = now;
      now = base - 2 * DAY;
      for (let i = 0; i < 300; i++) await submit(form.key, i);
      now = base;
      const id = await formId(form.key);
      // Each round under the job's named lock, as the scheduler runs it ('one process of all instances').
      const locked = (instance: typeof a, batch: number) =>
        new NamedLocks(instance.handle.db, dialect).runExclusive('job:retention', () => job(instance, batch).runOnce());
      const deleted = (run: Awaited<ReturnType<typeof locked>>) => (run.ran ? run.value.deleted : 0);
      const [first, second] = await Promise.all([locked(a, 20), locked(b!, 20)]);
      assert.equal(deleted(first) + deleted(second), 300, `${deleted(first)} + ${deleted(second)}`);
      assert.equal(await countOf(id), 0);
      const rest = await Promise.all([locked(a, 20), locked(b!, 20)]);
      assert.equal(deleted(rest[0]) + deleted(rest[1]), 0);
    });

    it("skips the scheduler's round while another PostgreSQL instance holds the retention lock", { skip: dialect !== 'postgres' }, async () => {
      const form = (await admin('POST', '/admin/v1/forms', { name: 'Held lock', retentionDays: 1 })).json() as { key: string };
      const base = now;
      now = base - 2 * DAY;
      for (let i = 0; i < 5; i++) await submit(form.key, i);
      now = base;
      const id = await formId(form.key);
      const scheduled = a.services.scheduler.here.find((j) => j.name === 'retention')!.job as TimedJob;
      const held = await new NamedLocks(b!.handle.db, dialect).runExclusive('job:retention', () => scheduled.runNow());
      assert.deepEqual(held, { ran: true, value: false }, 'instance a skipped its round while b held the lock');
      assert.equal(await countOf(id), 5);
      assert.equal(await scheduled.runNow(), true);
      assert.equal(await countOf(id), 0);
    });
  });
}
