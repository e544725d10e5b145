import type { FastifyReply, FastifyRequest } from 'fastify';
import { type MessageKey, messages } from '../errors.ts';
import type { RoutePlugin } from '../http/schemas.ts';
import { abandonUnreadBody, type FieldErrorEntry, formErrorOf, ResultLinks } from './submission-answer.ts';
import {
  admitSubmission,
  allowOrigin,
  type ClientSignals,
  logRefusal,
  preflightForm,
  prepareIntakeScope,
  receiveSubmission,
  type SubmissionIntakeDeps,
  UploadSlots,
} from './submission-intake.routes.ts';
import { formspreeErrorSchema, formspreeParams, formspreeSuccessSchema, noContentPreflight, submissionBody } from './submission.schemas.ts';

// The Formspree drop-in (issue 34, docs/adr/0047-formspree-compatibility.md). Formspree's client
// libraries (@formspree/core, @formspree/react, @formspree/ajax) post to `${endpoint}/f/${formKey}`;
// with their endpoint (or origin) option set to `<public URL>/formspree` they post here, and get
// Formspree's answers: `{"ok":true,"next":...}`, or `{"errors":[{field?, code?, message}]}`. The
// submission itself goes through exactly what /v1/s does (admission, CAPTCHA, honeypot, field rules,
// file policy, spam checks, storage, deliveries).

/** Formspree's form-level codes, for the refusals that have one (its libraries show them as form errors). */
const FORM_CODES: Array<[MessageKey, string]> = [
  ['formNotFound', 'FORM_NOT_FOUND'],
  ['formDisabled', 'INACTIVE'],
  ['formWebsiteNotAllowed', 'BLOCKED'],
  ['formIpBlocked', 'BLOCKED'],
  ['formUploadsDisabled', 'NO_FILE_UPLOADS'],
  ['formFileTooLarge', 'FILES_TOO_BIG'],
  ['formFilesTooLarge', 'FILES_TOO_BIG'],
  ['formBodyTooLarge', 'FILES_TOO_BIG'],
  ['formTooManyFiles', 'TOO_MANY_FILES'],
  ['formEmpty', 'EMPTY'],
];

/** A registered message as a pattern: its placeholders match anything. */
const patternOf = (key: MessageKey) => new RegExp(`^${messages[key].replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[\\s\\S]*')}$`);
const CODES = FORM_CODES.map(([key, code]) => ({ pattern: patternOf(key), code }));

/** Formspree's code of a refusal message, when it has one. */
export function formspreeCodeOf(text: string): string | undefined {
  return CODES.find((c) => c.pattern.test(text))?.code;
}

/** Longest Formspree-Session-Data header read (base64 of a small JSON object). */
const SESSION_DATA_MAX = 2000;

/**
 * What Formspree's libraries say about the page in `Formspree-Session-Data`: base64 of
 * `{"loadedAt": <ms since the epoch>, "webdriver": <bool>}`. Anything else is ignored, never refused.
 */
export function sessionSignals(headerValue: string | undefined): ClientSignals {
  if (!headerValue || headerValue.length > SESSION_DATA_MAX) return {};
  try {
    const data = JSON.parse(Buffer.from(headerValue, 'base64').toString('latin1')) as unknown;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return {};
    const { loadedAt, webdriver } = data as Record<string, unknown>;
    return {
      ...(typeof loadedAt === 'number' && Number.isFinite(loadedAt) && loadedAt > 0 ? { loadedAt } : {}),
      ...(typeof webdriver === 'boolean' ? { webdriver } : {}),
    };
  } catch {
    return {};
  }
}

/** The Formspree-shaped error body of a refusal. */
export function formspreeErrors(text: string, fieldErrors: FieldErrorEntry[] | undefined) {
  if (fieldErrors && fieldErrors.length > 0) return { errors: fieldErrors.map((e) => ({ field: e.field, code: e.code, message: e.message })) };
  const code = formspreeCodeOf(text);
  return { errors: [{ ...(code ? { code } : {}), message: text }] };
}

export const formspreeRoutes: RoutePlugin<SubmissionIntakeDeps> = async (app, deps) => {
  const links = new ResultLinks(deps.publicUrl, deps.resultPageKey);
  const slots = deps.slots ?? new UploadSlots(deps.limits);
  await prepareIntakeScope(app, deps);

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const answer = formErrorOf(error, deps.bodyLimit);
    logRefusal(request, error, answer);
    if (answer.retryAfter) reply.header('retry-after', String(answer.retryAfter));
    abandonUnreadBody(request, reply);
    reply.header('cache-control', 'no-store');
    return reply.code(answer.status).send(formspreeErrors(answer.message, answer.fieldErrors));
  });

  app.options(
    '/f/:formKey',
    {
      config: { surface: 'forms' },
      schema: { summary: "CORS preflight of a form's Formspree-compatible endpoint", params: formspreeParams, response: { 204: noContentPreflight } },
    },
    async (request, reply) => {
      const form = await preflightForm(deps.forms, request.params.formKey);
      allowOrigin(request, reply, form?.websites ?? []);
      return reply
        .code(204)
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'Content-Type, Accept, Formspree-Client, Formspree-Session-Data')
        .header('access-control-max-age', '86400')
        .send();
    },
  );

  app.post(
    '/f/:formKey',
    {
      config: { surface: 'forms' },
      schema: {
        summary: "Submit a form as Formspree's client libraries do (the Formspree drop-in)",
        consumes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
        params: formspreeParams,
        body: submissionBody,
        response: { 200: formspreeSuccessSchema, '4xx': formspreeErrorSchema, '5xx': formspreeErrorSchema },
      },
      preParsing: async (request, reply) => {
        await admitSubmission(request, reply, deps, request.params.formKey, true);
      },
    },
    async (request, reply) => {
      const signals = sessionSignals(typeof request.headers['formspree-session-data'] === 'string' ? request.headers['formspree-session-data'] : undefined);
      await receiveSubmission(request, deps, slots, signals);
      reply.header('cache-control', 'no-store');
      return reply.send({ ok: true, next: links.success(request.formContext!) });
    },
  );
};
