import { Readable } from 'node:stream';
import { AppError } from '../errors.ts';
import { encodeCursor, readPage } from '../http/paging.ts';
import { adminErrors, noContent, type RoutePlugin } from '../http/schemas.ts';
import { redactDelivery } from '../identity/index.ts';
import { deliveryView } from './outbox.ts';
import {
  download,
  dryRunBody,
  dryRunSchema,
  exportQuery,
  FIELD_FILTER_NAME,
  FIELD_FILTER_PREFIX,
  fileParams,
  MAX_FIELD_FILTERS,
  formKeyParams,
  submissionDetailSchema,
  submissionListQuery,
  submissionPageSchema,
  personalDataSchema,
  submissionParams,
} from './submission.schemas.ts';
import { submissionView } from './submission.ts';
import type { Person, PersonalDataService } from './personal-data.service.ts';
import type { SubmissionExportService } from './submission-export.service.ts';
import type { SubmissionService } from './submission.service.ts';

const spamFilter = (spam: 'true' | 'false' | 'all' | undefined) => (spam === 'true' ? true : spam === 'false' ? false : undefined);
/** Exports leave spam out unless asked for (`spam=true` or `spam=all`; issue 12). */
const exportFilter = (spam: 'true' | 'false' | 'all' | undefined) => spamFilter(spam ?? 'false');

/**
 * The `field.<name>=<value>` parameters of a listing (issue 34): at most MAX_FIELD_FILTERS, each name
 * once, names without quotes or control characters, values of at most 1,000 characters without NUL.
 */
function fieldFilters(query: Record<string, unknown>): Array<[string, string]> {
  const filters: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(query)) {
    if (!key.startsWith(FIELD_FILTER_PREFIX)) continue;
    const name = key.slice(FIELD_FILTER_PREFIX.length);
    const field = `querystring.${key}`;
    if (!FIELD_FILTER_NAME.test(name))
      throw AppError.validation([{ field, reason: 'must name a field: 1 to 100 characters, no quotes, backslashes or control characters' }]);
    if (typeof value !== 'string') throw AppError.validation([{ field, reason: 'must be given once' }]);
    if (value.length > 1000 || value.includes('\u0000')) throw AppError.validation([{ field, reason: 'must be at most 1000 characters, without NUL' }]);
    filters.push([name, value]);
  }
  if (filters.length > MAX_FIELD_FILTERS)
    throw AppError.validation([{ field: 'querystring', reason: `must hold at most ${MAX_FIELD_FILTERS} field filters (field.<name>=<value>)` }]);
  return filters;
}

const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** RFC 6266 attachment header: an ASCII fallback name plus the exact UTF-8 name. */
function attachment(given: string): string {
  // Direction controls would let `invoice‮fdp.exe` show as `invoiceexe.pdf` in a download dialog.
  const name = given.replace(BIDI_CONTROLS, '');
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

const SAFE_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

/** Admin API for a form's submissions under /admin/v1. */
export interface SubmissionAdminDeps {
  submissions: SubmissionService;
  exports: SubmissionExportService;
  personalData: PersonalDataService;
}

export const submissionAdminRoutes: RoutePlugin<SubmissionAdminDeps> = async (app, { submissions, exports, personalData }) => {
  app.post(
    '/forms/:formKey/spam-rules/dry-run',
    {
      schema: {
        summary: "What changed spam checks would have decided for the form's last 1,000 submissions (nothing is saved)",
        params: formKeyParams,
        body: dryRunBody,
        response: { 200: dryRunSchema, ...adminErrors },
      },
    },
    async (request) => submissions.dryRunSpamChecks(request.params.formKey, request.body.spamChecks),
  );

  app.get(
    '/forms/:formKey/submissions',
    {
      config: { access: 'submissions', formReadToken: true },
      schema: {
        summary: "A page of a form's submissions, newest first (or oldest first), filtered by time, spam, field values and full text",
        params: formKeyParams,
        querystring: submissionListQuery,
        response: { 200: submissionPageSchema, ...adminErrors },
      },
    },
    async (request) => {
      const page = await submissions.list(request.params.formKey, readPage(request.query), {
        spam: spamFilter(request.query.spam),
        spamCheck: request.query.spamCheck,
        // Stored times are ISO-8601 in UTC (toISOString), so a normalised bound compares as text on both engines.
        since: request.query.since === undefined ? undefined : new Date(request.query.since).toISOString(),
        until: request.query.until === undefined ? undefined : new Date(request.query.until).toISOString(),
        fields: fieldFilters(request.query as Record<string, unknown>),
        q: request.query.q === undefined || request.query.q.trim() === '' ? undefined : request.query.q,
        order: request.query.order,
      });
      return { submissions: page.items.map(submissionView), nextCursor: encodeCursor(page.next) };
    },
  );

  app.get(
    '/forms/:formKey/submissions.csv',
    {
      config: { access: 'submissions', formReadToken: true },
      schema: {
        summary: 'Every submission of a form as CSV, newest first (streamed); spam only when asked',
        params: formKeyParams,
        querystring: exportQuery,
        response: { 200: download('text/csv', 'CSV attachment: id, createdAt, spam, one column per field, files'), ...adminErrors },
      },
    },
    async (request, reply) => {
      const csv = await exports.exportCsv(request.params.formKey, { spam: exportFilter(request.query.spam) });
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', attachment(`${request.params.formKey}-submissions.csv`))
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .send(Readable.from(csv) as never); // the type provider models JSON bodies, not streams
    },
  );

  app.get(
    '/forms/:formKey/submissions.json',
    {
      config: { access: 'submissions', formReadToken: true },
      schema: {
        summary: 'Every submission of a form as a JSON array, newest first (streamed); spam only when asked',
        params: formKeyParams,
        querystring: exportQuery,
        response: { 200: download('application/json', 'JSON attachment: [{id, createdAt, spam, data, files, meta}, ...]'), ...adminErrors },
      },
    },
    async (request, reply) => {
      const json = await exports.exportJson(request.params.formKey, { spam: exportFilter(request.query.spam) });
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', attachment(`${request.params.formKey}-submissions.json`))
        .header('cache-control', 'no-store')
        .send(Readable.from(json) as never); // the type provider models JSON bodies, not streams
    },
  );

  app.get(
    '/forms/:formKey/submissions/:id',
    {
      config: { access: 'submissions', formReadToken: true },
      schema: {
        summary: 'One submission with its request metadata and delivery history',
        params: submissionParams,
        response: { 200: submissionDetailSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { submission, deliveries } = await submissions.get(request.params.formKey, request.params.id);
      return {
        ...submissionView(submission),
        meta: submission.meta,
        deliveries: deliveries.map(({ delivery, attempts }) => redactDelivery(request.role, deliveryView(delivery, attempts))),
      };
    },
  );

  app.patch(
    '/forms/:formKey/submissions/:id',
    {
      schema: {
        summary: 'Mark a submission as spam or not spam',
        params: submissionParams,
        body: { type: 'object', additionalProperties: false, required: ['spam'], properties: { spam: { type: 'boolean' } } },
        response: { 200: submissionDetailSchema, ...adminErrors },
      },
    },
    async (request) => {
      const { submission, deliveries } = await submissions.markSpam(request.params.formKey, request.params.id, request.body.spam, request.actor);
      return {
        ...submissionView(submission),
        meta: submission.meta,
        deliveries: deliveries.map(({ delivery, attempts }) => redactDelivery(request.role, deliveryView(delivery, attempts))),
      };
    },
  );

  app.delete(
    '/forms/:formKey/submissions/:id',
    { schema: { summary: 'Delete a submission with its files and deliveries', params: submissionParams, response: { 204: noContent, ...adminErrors } } },
    async (request, reply) => {
      await submissions.delete(request.params.formKey, request.params.id, request.actor);
      return reply.code(204).send();
    },
  );

  // Access and erasure requests (issue 12, GDPR articles 15 and 17): the address travels in the body,
  // so that it is in no URL and no request log line.
  // An e-mail address finds submissions and the experiment events whose targeting key is that address;
  // a targeting key that is not an address (a user id) finds only events (issue 32).
  const personBody = {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    properties: {
      email: { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$', description: 'The e-mail address of the person' },
      targetingKey: { type: 'string', minLength: 1, maxLength: 256, description: 'A targeting key of the person that is not an e-mail address' },
    },
  } as const;
  const personOf = (body: { email?: string; targetingKey?: string }): Person =>
    body.email !== undefined ? { email: body.email } : { targetingKey: body.targetingKey! };
  const echo = (person: Person) => ('email' in person ? { email: person.email } : { targetingKey: person.targetingKey });
  app.post(
    '/personal-data/export',
    {
      schema: {
        summary: "Every submission, across all forms, whose fields contain a person's e-mail address, and their experiment events (access request)",
        body: personBody,
        response: { 200: personalDataSchema, ...adminErrors },
      },
    },
    async (request, reply) => {
      const person = personOf(request.body);
      const found = await personalData.exportPerson(person, request.actor);
      return reply.header('cache-control', 'no-store').send({
        ...echo(person),
        submissions: found.submissions.map((s) => ({ form: s.form, ...submissionView(s), meta: s.meta })),
        events: found.events,
      });
    },
  );

  app.post(
    '/personal-data/erase',
    {
      schema: {
        summary: "Delete every submission, across all forms, whose fields contain a person's e-mail address, and their experiment events (erasure request)",
        body: personBody,
        response: {
          200: {
            type: 'object',
            additionalProperties: false,
            required: ['deleted', 'submissionIds', 'eventsDeleted'],
            properties: {
              email: { type: 'string' },
              targetingKey: { type: 'string' },
              deleted: { type: 'integer', description: 'Submissions deleted' },
              submissionIds: { type: 'array', items: { type: 'string' } },
              eventsDeleted: { type: 'integer', description: 'Exposures, tracked events and experiment users deleted' },
            },
          },
          ...adminErrors,
        },
      },
    },
    async (request, reply) => {
      const person = personOf(request.body);
      const { submissionIds, eventsDeleted } = await personalData.erasePerson(person, request.actor);
      return reply.header('cache-control', 'no-store').send({ ...echo(person), deleted: submissionIds.length, submissionIds, eventsDeleted });
    },
  );

  // Always an attachment, never rendered inline: the bytes come from anyone who can post to the form.
  app.get(
    '/forms/:formKey/submissions/:id/files/:fileId',
    {
      config: { access: 'submissions' },
      schema: {
        summary: 'Download a file of a submission (always an attachment)',
        params: fileParams,
        response: { 200: download('application/octet-stream', 'The file as uploaded, as an attachment'), ...adminErrors },
      },
    },
    async (request, reply) => {
      const { formKey, id, fileId } = request.params;
      const { file, body } = await submissions.getFile(formKey, id, fileId);
      return reply
        .type(SAFE_TYPE.test(file.contentType) ? file.contentType : 'application/octet-stream')
        .header('content-disposition', attachment(file.name))
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'no-store')
        .header('content-length', String(file.size))
        .send(body as never); // bytes or a stream from the file store, which the type provider does not model
    },
  );
};
