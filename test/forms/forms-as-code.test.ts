import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveFormSecrets } from '../../src/commands/project-document.cli.ts';
import { forEachDialect, type TestContext } from '../support/context.ts';
import { createFlag, createProject } from '../support/fixtures.ts';

// Issue 34, forms as code: a project's forms in the document of `flagpost export`/`apply` (flags as code,
// issue 21), secrets as $NAME references, applied idempotently, on both engines.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read documents and answers freely; the schema check covers their shape
type Doc = Record<string, any>;

const SETTINGS = {
  uploadsEnabled: true,
  honeypot: null,
  websites: ['https://shop.example'],
  successUrl: 'https://shop.example/thanks',
  notifyEmails: ['team@shop.example'],
  slackWebhookUrl: 'https://hooks.slack.example/services/T000/B000/XXXX',
  retentionDays: 90,
  captcha: { provider: 'turnstile', secret: '0x4AAAAAAA-secret' },
  notifications: { subject: 'New message from {{ name }}', cc: ['boss@shop.example'] },
  autoResponse: { enabled: true, subject: 'Thanks, {{ name }}', body: '<p>We answer within a day.</p>' },
  webhooks: [{ url: 'https://crm.shop.example/hook', conditions: [{ attribute: 'topic', operator: 'equals', values: ['sales'] }] }],
  fieldRules: { properties: { email: { type: 'string', format: 'email' } }, required: ['email'] },
  filePolicy: { allowedTypes: ['application/pdf'], maxFileBytes: 500000 },
  spamChecks: { duplicates: { enabled: true }, minFillSeconds: 3 },
  analytics: { views: true },
};

forEachDialect(
  'forms as code',
  (ctx) => {
    const ok = async (res: Promise<{ statusCode: number; body: string; json(): Doc }>, status = 200) => {
      const answer = await res;
      assert.equal(answer.statusCode, status, answer.body);
      return answer.json();
    };
    const exportOf = (projectKey: string): Promise<Doc> => ok(ctx().admin('GET', `/admin/v1/projects/${projectKey}/document`));
    const apply = (document: Doc, extra: Doc = {}) => ctx().admin('POST', '/admin/v1/documents/apply', { document, ...extra });
    const formRow = (key: string) => ctx().handle.db.selectFrom('forms').selectAll().where('key', '=', key).executeTakeFirst();
    const seed = async (c: TestContext, name: string) => {
      const project = await createProject(c, name);
      await createFlag(c, project.key, { slug: 'checkout' });
      const full = await ok(c.admin('POST', '/admin/v1/forms', { name: 'Contact', projectKey: project.key, ...SETTINGS }), 201);
      const plain = await ok(c.admin('POST', '/admin/v1/forms', { name: 'Newsletter', projectKey: project.key }), 201);
      return { project, full: full.key as string, plain: plain.key as string };
    };

    it('exports the forms of a project with defaults left out and secrets only as $NAME references', async () => {
      const { project, full, plain } = await seed(ctx(), 'Forms shop');
      const doc = await exportOf(project.key);
      assert.deepEqual(Object.keys(doc), ['version', 'project', 'environments', 'segments', 'flags', 'forms']);
      assert.deepEqual(doc.forms[plain], { name: 'Newsletter' });
      const variable = (suffix: string) => `$FLAGPOST_FORM_${full.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${suffix}`;
      assert.deepEqual(doc.forms[full], {
        name: 'Contact',
        ...SETTINGS,
        slackWebhookUrl: variable('SLACK_WEBHOOK_URL'),
        captcha: { provider: 'turnstile', secret: variable('CAPTCHA_SECRET'), minScore: null },
        notifications: { ...SETTINGS.notifications },
        filePolicy: { allowedTypes: ['application/pdf'], maxFileBytes: 500000 },
      });
      const text = JSON.stringify(doc);
      for (const secret of ['0x4AAAAAAA-secret', 'hooks.slack.example', 'whsec_']) assert.ok(!text.includes(secret), `${secret} is not exported`);
      // A project without forms exports the document of flags as code as before.
      const bare = await createProject(ctx(), 'No forms');
      assert.equal('forms' in (await exportOf(bare.key)), false);
    });

    it('applies its own export with no change, and a second apply of a document changes nothing', async () => {
      const { project, full } = await seed(ctx(), 'Idempotent');
      const doc = await exportOf(project.key);
      const before = await formRow(full);
      const first = await ok(apply(doc));
      assert.deepEqual(first.changes, []);
      assert.deepEqual(await formRow(full), before, 'unresolved references keep the stored secrets; nothing is written');
      const edited = structuredClone(doc);
      edited.forms[full].spamChecks = { duplicates: { enabled: true, windowMinutes: 30 } };
      edited.forms[full].name = 'Contact us';
      const planned = await ok(apply(edited, { dryRun: true }));
      assert.deepEqual(
        planned.changes.filter((c: Doc) => c.kind === 'form'),
        [{ action: 'update', kind: 'form', key: full, fields: ['name', 'spamChecks'] }],
      );
      assert.deepEqual(await formRow(full), before, 'a dry run writes nothing');
      const applied = await ok(apply(edited));
      assert.deepEqual(applied.changes, planned.changes);
      const after = await ok(ctx().admin('GET', `/admin/v1/forms/${full}`));
      assert.equal(after.name, 'Contact us');
      assert.deepEqual(after.spamChecks, { duplicates: { enabled: true, windowMinutes: 30 } });
      assert.equal((await formRow(full))!.captcha_secret, '0x4AAAAAAA-secret');
      const again = await ok(apply(edited));
      assert.deepEqual(again.changes, []);
      assert.deepEqual(await exportOf(project.key), edited);
      const audit = await ok(ctx().admin('GET', `/admin/v1/audit?entity=form&entityId=${full}`));
      assert.equal(audit.entries.filter((e: Doc) => e.action === 'form.updated').length, 1);
    });

    it('creates the forms of a document with their keys, secrets resolved from the environment where apply runs', async () => {
      const { project, full, plain } = await seed(ctx(), 'Restore');
      const doc = await exportOf(project.key);
      for (const key of [full, plain]) assert.equal((await ctx().admin('DELETE', `/admin/v1/forms/${key}`)).statusCode, 204);
      // Unresolved, a new form has no secret to keep: 400 naming the paths, nothing written.
      const refused = await apply(doc);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.deepEqual(
        refused
          .json()
          .details.map((d: Doc) => d.field)
          .sort(),
        [`body.document.forms.${full}.captcha.secret`, `body.document.forms.${full}.slackWebhookUrl`],
      );
      assert.equal(await formRow(plain), undefined);
      const env: Record<string, string> = {};
      env[doc.forms[full].captcha.secret.slice(1)] = 'restored-captcha-secret';
      env[doc.forms[full].slackWebhookUrl.slice(1)] = 'https://hooks.slack.example/services/T1/B1/YYYY';
      const resolved = structuredClone(doc);
      assert.deepEqual(resolveFormSecrets(resolved, env).sort(), Object.keys(env).sort());
      const applied = await ok(apply(resolved));
      assert.deepEqual(
        applied.changes.filter((c: Doc) => c.kind === 'form'),
        [
          { action: 'create', kind: 'form', key: full },
          { action: 'create', kind: 'form', key: plain },
        ].sort((a, b) => (a.key < b.key ? -1 : 1)),
      );
      const row = (await formRow(full))!;
      assert.equal(row.captcha_secret, 'restored-captcha-secret');
      assert.equal(row.slack_webhook_url, 'https://hooks.slack.example/services/T1/B1/YYYY');
      assert.match(row.webhook_secret ?? '', /^whsec_/, 'a form with webhooks signs with a secret of its own');
      assert.deepEqual(await exportOf(project.key), doc);
      assert.deepEqual((await ok(apply(resolved))).changes, []);
      // The form takes submissions at its old key.
      const submitted = await ctx().app.inject({
        method: 'POST',
        url: `/v1/s/${plain}?mode=rest`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email: 'ada@example.com' }),
      });
      assert.equal(submitted.statusCode, 200, submitted.body);
    });

    it("keeps forms a document does not name, leaves forms alone without `forms`, and refuses another project's key", async () => {
      const { project, full, plain } = await seed(ctx(), 'Partial');
      const doc = await exportOf(project.key);
      const withoutForms = structuredClone(doc);
      delete withoutForms.forms;
      assert.deepEqual((await ok(apply(withoutForms))).changes, []);
      const one = structuredClone(doc);
      delete one.forms[plain];
      assert.deepEqual((await ok(apply(one))).changes, []);
      assert.ok(await formRow(plain), 'a form the document does not name is kept');
      const other = await createProject(ctx(), 'Other shop');
      const stolen = { ...(await exportOf(other.key)), forms: { [full]: { name: 'Mine now' } } };
      const refused = await apply(stolen);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(refused.json().message, `Form ${full} belongs to another project (or to none): a document names the forms of its own project`);
      assert.equal((await formRow(full))!.name, 'Contact');
      const bad = structuredClone(doc);
      bad.forms[plain] = { name: 'Bad', successUrl: 'javascript:alert(1)', unknown: true };
      assert.equal((await apply(bad)).statusCode, 400);
      bad.forms[plain] = { name: 'Bad', successUrl: 'javascript:alert(1)' };
      const invalid = await apply(bad);
      assert.equal(invalid.statusCode, 400);
      assert.deepEqual(
        invalid.json().details.map((d: Doc) => d.field),
        [`body.document.forms.${plain}.successUrl`],
      );
      assert.equal((await apply({ ...doc, forms: { 'bad key!': { name: 'x' } } })).statusCode, 400);
    });
  },
  { FLAGPOST_WEBHOOK_TARGETS: 'any' },
);

describe('forms as code: resolving secrets where apply runs', () => {
  it('replaces only references of secret settings that the environment holds', () => {
    const doc = {
      forms: {
        a: { name: 'A', slackWebhookUrl: '$SLACK', discordWebhookUrl: '$UNSET', captcha: { provider: 'turnstile', secret: '$CAPTCHA' }, successUrl: '$SLACK' },
        b: { name: '$SLACK' },
      },
    };
    assert.deepEqual(resolveFormSecrets(doc, { SLACK: 'https://hooks.example/x', CAPTCHA: 's3cret', EMPTY: '' }), ['SLACK', 'CAPTCHA']);
    assert.deepEqual(doc.forms, {
      a: {
        name: 'A',
        slackWebhookUrl: 'https://hooks.example/x',
        discordWebhookUrl: '$UNSET',
        captcha: { provider: 'turnstile', secret: 's3cret' },
        successUrl: '$SLACK',
      },
      b: { name: '$SLACK' },
    });
    assert.deepEqual(resolveFormSecrets({ flags: {} }, { SLACK: 'x' }), []);
  });
});
