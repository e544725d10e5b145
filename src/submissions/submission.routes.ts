import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { encodeCursor, readPage } from '../http/paging.ts';
import { deliveryView } from '../outbox/index.ts';
import { submissionListQuery } from './submission.schemas.ts';
import { submissionView } from './submission.ts';
import type { SubmissionService } from './submission.service.ts';

type SubmissionParams = { formKey: string; id: string };
type ListQuery = { cursor?: string; limit?: string; spam?: 'true' | 'false' | 'all' };

const spamFilter = (spam: ListQuery['spam']) => (spam === 'true' ? true : spam === 'false' ? false : undefined);

/** RFC 6266 attachment header: an ASCII fallback name plus the exact UTF-8 name. */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

const SAFE_TYPE = /^[\w.+-]+\/[\w.+-]+$/;

/** Admin API for a form's submissions under /admin/v1. */
export const submissionAdminRoutes: FastifyPluginAsync<{ submissions: SubmissionService }> = async (app, { submissions }) => {
  app.get<{ Params: { formKey: string }; Querystring: ListQuery }>(
    '/forms/:formKey/submissions',
    { schema: { querystring: submissionListQuery } },
    async (request) => {
      const page = await submissions.list(request.params.formKey, readPage(request.query), { spam: spamFilter(request.query.spam) });
      return { submissions: page.items.map(submissionView), nextCursor: encodeCursor(page.next) };
    },
  );

  app.get<{ Params: { formKey: string }; Querystring: ListQuery }>(
    '/forms/:formKey/submissions.csv',
    { schema: { querystring: submissionListQuery } },
    async (request, reply) => {
      const csv = await submissions.exportCsv(request.params.formKey, { spam: spamFilter(request.query.spam) });
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', attachment(`${request.params.formKey}-submissions.csv`))
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .send(Readable.from(csv));
    },
  );

  app.get<{ Params: SubmissionParams }>('/forms/:formKey/submissions/:id', async (request) => {
    const { submission, deliveries } = await submissions.get(request.params.formKey, request.params.id);
    return {
      ...submissionView(submission),
      meta: submission.meta,
      deliveries: deliveries.map(({ delivery, attempts }) => deliveryView(delivery, attempts)),
    };
  });

  app.delete<{ Params: SubmissionParams }>('/forms/:formKey/submissions/:id', async (request, reply) => {
    await submissions.delete(request.params.formKey, request.params.id);
    return reply.code(204).send();
  });

  // Always an attachment, never rendered inline: the bytes come from anyone who can post to the form.
  app.get<{ Params: SubmissionParams & { fileId: string } }>('/forms/:formKey/submissions/:id/files/:fileId', async (request, reply) => {
    const { formKey, id, fileId } = request.params;
    const { file, content } = await submissions.getFile(formKey, id, fileId);
    return reply
      .type(SAFE_TYPE.test(file.contentType) ? file.contentType : 'application/octet-stream')
      .header('content-disposition', attachment(file.name))
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cache-control', 'no-store')
      .send(content);
  });
};
