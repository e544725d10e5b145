import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, message, messages } from '../errors.ts';
import type { Form, FormService } from '../forms/index.ts';
import { clientKey } from '../http/client-key.ts';
import type { RoutePlugin } from '../http/schemas.ts';
import { admissionRefusal } from './admission.ts';
import { PAGE_HEADERS, resultPage } from './result-pages.ts';
import { type FormErrorAnswer, type FormRequestContext, formErrorOf, goBackUrlOf, ResultLinks, sendFormError } from './submission-answer.ts';
import { parseUrlencoded, readMultipart, readParsedBody, type SubmissionLimits } from './submission-body.ts';
import {
  formErrorSchema,
  formKeyParams,
  htmlPage,
  noContentPreflight,
  challengeSchema,
  redirect,
  renderedSchema,
  resultPageQuery,
  submissionBody,
  submitQuery,
  submittedSchema,
} from './submission.schemas.ts';
import type { Submission } from './submission.ts';
import type { SubmissionIntakeService } from './submission-intake.service.ts';
import { UploadGate } from './upload-gate.ts';
import { checkProofOfWork, newChallenge, POW_FIELD, type ProofOfWork } from './proof-of-work.ts';
import { RENDER_FIELD, renderedAt, renderToken } from './spam-checks.ts';

declare module 'fastify' {
  interface FastifyRequest {
    formContext: FormRequestContext | null;
  }
}

export interface SubmissionIntakeDeps {
  forms: FormService;
  submissions: SubmissionIntakeService;
  limits: SubmissionLimits;
  /** Largest JSON or urlencoded body in bytes. */
  bodyLimit: number;
  publicUrl: string;
  /** The key that signs links to the built-in result pages (shared by every instance). */
  resultPageKey: Buffer;
  mailEnabled: boolean;
  /** Upload slots shared by every submission endpoint (/v1/s and /formspree); one of its own when absent. */
  slots?: UploadSlots;
}

/** The bound on multipart submissions under way, over every submission endpoint of the process. */
export class UploadSlots {
  readonly gate: UploadGate;
  /** Multipart submissions under way per client key. */
  readonly perClient = new Map<string, number>();
  constructor(limits: Pick<SubmissionLimits, 'maxConcurrentUploads'>) {
    this.gate = new UploadGate(limits.maxConcurrentUploads);
  }
}

/** What a submission endpoint learnt from the client besides its fields (Formspree's session data). */
export interface ClientSignals {
  /** When the page with the form was loaded, in ms since the epoch, as the client says. */
  loadedAt?: number;
  /** The client said it runs under automation (navigator.webdriver): recorded, never a verdict by itself. */
  webdriver?: boolean;
}

/** Form keys are generated as base64url text (src/db/codec.ts newKey). */
const FORM_KEY = /^[A-Za-z0-9_-]{1,64}$/;

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Prepares a scope to read submissions: only there are urlencoded and multipart bodies parsed, so the
 * flag endpoints keep taking JSON only. Used by /v1/s and by the Formspree drop-in (/formspree).
 */
export async function prepareIntakeScope(app: FastifyInstance, deps: SubmissionIntakeDeps): Promise<void> {
  const { limits } = deps;
  app.removeContentTypeParser('text/plain');
  // Our own urlencoded parser: it counts fields while it parses (issue 8).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: deps.bodyLimit }, (_request, body, done) => {
    try {
      done(null, parseUrlencoded(body as string, limits));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  await app.register(multipart, { limits: { fileSize: limits.maxFileBytes + 1 } });
  app.decorateRequest('formContext', null);
  // Before the rate limit's onRequest: a cross-origin client must be able to read its 429 too (D19).
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*');
  });
}

/** Contract D19: any origin, unless the form lists websites; then only those, echoed with Vary: Origin. */
export function allowOrigin(request: FastifyRequest, reply: FastifyReply, websites: readonly string[]): void {
  const origin = header(request, 'origin');
  reply.removeHeader('access-control-allow-origin');
  if (websites.length === 0) reply.header('access-control-allow-origin', '*');
  else {
    reply.header('vary', 'Origin');
    if (origin && websites.includes(origin)) reply.header('access-control-allow-origin', origin);
  }
}

/** The form a preflight asks about, when its key can exist. */
export async function preflightForm(forms: FormService, formKey: string) {
  return FORM_KEY.test(formKey) ? forms.find(formKey) : undefined;
}

/**
 * Checks that need no body, before any of it is read (contract D15, D16), and after the rate limit's
 * onRequest, so that refused requests (unknown forms, blocked IPs) are counted too. Sets the request's
 * form context; throws the refusal.
 */
export async function admitSubmission(request: FastifyRequest, reply: FastifyReply, deps: SubmissionIntakeDeps, formKey: string, rest: boolean): Promise<void> {
  const referer = header(request, 'referer');
  const ctx: FormRequestContext = { rest, form: undefined, goBackUrl: goBackUrlOf(undefined, referer) };
  request.formContext = ctx;
  reply.header('access-control-allow-origin', '*');
  // A key that cannot exist is not looked up (a NUL byte would even be a PostgreSQL error).
  const form = FORM_KEY.test(formKey) ? await deps.forms.find(formKey) : undefined;
  if (!form) throw new AppError('not_found', message('formNotFound', { formKey: formKey.slice(0, 100) }));
  ctx.form = form;
  ctx.goBackUrl = goBackUrlOf(form, referer);
  reply.removeHeader('access-control-allow-origin');
  allowOrigin(request, reply, form.websites);
  const refusal = admissionRefusal(
    form,
    {
      ip: request.ip,
      origin: header(request, 'origin'),
      referer,
      contentType: request.headers['content-type'],
      contentLength: request.headers['content-length'],
    },
    deps.limits,
  );
  if (refusal) throw refusal;
}

/** Reads the body of an admitted submission (any of the three encodings) and stores it (SubmissionService.accept). */
export async function receiveSubmission(
  request: FastifyRequest,
  deps: SubmissionIntakeDeps,
  slots: UploadSlots,
  signals: ClientSignals = {},
): Promise<Submission> {
  const { submissions, limits } = deps;
  const form = request.formContext!.form!;
  const meta = {
    ip: request.ip ?? null,
    userAgent: header(request, 'user-agent')?.slice(0, 1000) ?? null,
    referer: header(request, 'referer')?.slice(0, 2000) ?? null,
    origin: header(request, 'origin')?.slice(0, 500) ?? null,
    webdriver: signals.webdriver ?? null,
  };
  if (!request.isMultipart()) {
    const urlencoded = request.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded') ?? false;
    const body = readParsedBody(request.body, urlencoded, limits);
    return submissions.accept(form, { data: body.data, files: body.files, meta, ...(await proofsOf(deps, form, body.data, signals)) });
  }
  const client = whileConnected(request);
  // One client cannot take every upload slot: its further uploads are refused, not queued. Counted
  // per client key (IPv6 per /64), as the rate limiter counts.
  const ip = clientKey(request.ip);
  const uploadsOf = slots.perClient;
  if ((uploadsOf.get(ip) ?? 0) >= limits.maxUploadsPerClient) {
    client.done();
    throw new AppError('rate_limited', messages.tooManyRequests);
  }
  uploadsOf.set(ip, (uploadsOf.get(ip) ?? 0) + 1);
  try {
    // Files stay in memory until committed (or stream to the file store): bound how many uploads do that at once.
    const release = await slots.gate.acquire(client.signal);
    try {
      // A client that left while it waited would never end its body: the multipart parser starts
      // listening for the close only now, too late to hear it.
      if (client.signal.aborted) throw new AppError('validation', messages.formUnreadable);
      const body = await withinDeadline(
        readMultipart(request, form.uploadsEnabled, limits, submissions, form.filePolicy),
        limits.uploadTimeoutMs,
        () => request.raw.destroy(),
        // A body that ended after its deadline was refused: its files go.
        (late) => submissions.discardFiles(late.files.map((f) => f.received)),
      );
      return await submissions.accept(form, { data: body.data, files: body.files, meta, ...(await proofsOf(deps, form, body.data, signals)) });
    } finally {
      release();
    }
  } finally {
    client.done();
    const left = (uploadsOf.get(ip) ?? 1) - 1;
    if (left === 0) uploadsOf.delete(ip);
    else uploadsOf.set(ip, left);
  }
}

/**
 * What the client proved besides its fields, taken out of the data (they are no fields of the form): when
 * the form was rendered (Formspree's page-load time, else the form snippet's signed RENDER_FIELD), and,
 * for a form that asks for it, its ALTCHA proof of work (POW_FIELD).
 */
async function proofsOf(
  deps: SubmissionIntakeDeps,
  form: Form,
  data: Record<string, unknown>,
  signals: ClientSignals,
): Promise<{ loadedAt?: number; proofOfWork?: ProofOfWork }> {
  const token = data[RENDER_FIELD];
  delete data[RENDER_FIELD];
  const loadedAt = signals.loadedAt ?? renderedAt(deps.resultPageKey, form.key, token);
  if (!form.spamChecks?.proofOfWork) return { loadedAt };
  const solution = data[POW_FIELD];
  delete data[POW_FIELD];
  return { loadedAt, proofOfWork: await checkProofOfWork(deps.resultPageKey, form.key, solution) };
}

/** The form submission interface at /v1/s (contract D13-D19). */
export const submissionIntakeRoutes: RoutePlugin<SubmissionIntakeDeps> = async (app, deps) => {
  const { forms } = deps;
  const links = new ResultLinks(deps.publicUrl, deps.resultPageKey);
  const slots = deps.slots ?? new UploadSlots(deps.limits);
  if (!deps.mailEnabled) app.log.warn('SMTP_URL is not set: notification e-mails are off');
  await prepareIntakeScope(app, deps);

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const answer = formErrorOf(error, deps.bodyLimit);
    logRefusal(request, error, answer);
    if (answer.retryAfter) reply.header('retry-after', String(answer.retryAfter));
    const ctx = request.formContext ?? { rest: (request.query as { mode?: string } | undefined)?.mode === 'rest', form: undefined, goBackUrl: undefined };
    return sendFormError(request, reply, ctx, links, answer.status, answer.message, answer.fieldErrors);
  });

  app.options(
    '/:formKey',
    { config: { surface: 'forms' }, schema: { summary: "CORS preflight of a form's endpoint", params: formKeyParams, response: { 204: noContentPreflight } } },
    async (request, reply) => {
      const form = await preflightForm(forms, request.params.formKey);
      allowOrigin(request, reply, form?.websites ?? []);
      return reply
        .code(204)
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'Content-Type, Accept')
        .header('access-control-max-age', '86400')
        .send();
    },
  );

  app.post(
    '/:formKey',
    {
      config: { surface: 'forms' },
      schema: {
        summary: 'Submit a form',
        consumes: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
        params: formKeyParams,
        querystring: submitQuery,
        body: submissionBody,
        response: { 200: submittedSchema, 303: redirect, '4xx': formErrorSchema, '5xx': formErrorSchema },
      },
      preParsing: async (request, reply) => {
        await admitSubmission(request, reply, deps, request.params.formKey, request.query.mode === 'rest');
      },
    },
    async (request, reply) => {
      const ctx = request.formContext!;
      const submission = await receiveSubmission(request, deps, slots);
      const url = links.success(ctx);
      reply.header('cache-control', 'no-store');
      if (ctx.rest) return reply.send({ success: true, code: 200, message: messages.formSubmitted, url, id: submission.id });
      return reply.code(303).header('location', url).type('text/plain; charset=utf-8').send(`See ${url}`);
    },
  );

  // The form snippet's render timestamp (issue 34): a page asks for one when it shows the form and sends it
  // back in RENDER_FIELD, so that the minimum fill time is measured from a time the client cannot invent.
  app.get(
    '/:formKey/rendered',
    {
      config: { surface: 'forms' },
      schema: {
        summary: 'A signed render timestamp for the minimum fill time check',
        params: formKeyParams,
        response: { 200: renderedSchema, '4xx': formErrorSchema },
      },
    },
    async (request, reply) => {
      const form = await preflightForm(forms, request.params.formKey);
      if (!form) throw new AppError('not_found', message('formNotFound', { formKey: request.params.formKey.slice(0, 100) }));
      allowOrigin(request, reply, form.websites);
      reply.header('cache-control', 'no-store');
      request.formContext = { rest: true, form, goBackUrl: undefined };
      return { field: RENDER_FIELD, token: renderToken(deps.resultPageKey, form.key, Date.now()) };
    },
  );

  // The ALTCHA challenge of a form's page (spamChecks.proofOfWork): solved in the browser, sent in `altcha`.
  app.get(
    '/:formKey/challenge',
    {
      config: { surface: 'forms' },
      schema: { summary: 'An ALTCHA proof-of-work challenge for the form', params: formKeyParams, response: { 200: challengeSchema, '4xx': formErrorSchema } },
    },
    async (request, reply) => {
      const form = await preflightForm(forms, request.params.formKey);
      if (!form) throw new AppError('not_found', message('formNotFound', { formKey: request.params.formKey.slice(0, 100) }));
      allowOrigin(request, reply, form.websites);
      reply.header('cache-control', 'no-store');
      request.formContext = { rest: true, form, goBackUrl: undefined };
      const { parameters, signature } = await newChallenge(deps.resultPageKey, form.key, Date.now());
      return { parameters: { ...parameters }, signature: signature! };
    },
  );

  for (const kind of ['success', 'error'] as const) {
    app.get(
      `/${kind}`,
      {
        config: { surface: 'system' },
        schema: { summary: `The built-in ${kind} page of forms without their own ${kind}Url`, querystring: resultPageQuery, response: { 200: htmlPage } },
      },
      async (request, reply) => {
        const text = typeof request.query.message === 'string' ? request.query.message : undefined;
        const back = typeof request.query.goBackUrl === 'string' ? request.query.goBackUrl : undefined;
        const sig = typeof request.query.sig === 'string' ? request.query.sig : undefined;
        // Only what Flagpost issued is shown; anything else gets the page's own words and no link.
        const issued = text !== undefined && links.verify(text, back, sig);
        return reply.headers(PAGE_HEADERS).send(issued ? resultPage(kind, text, back) : resultPage(kind, undefined, undefined));
      },
    );
  }
};

/** Logs a refused submission: unexpected errors as errors, an unavailable store as a warning, the rest briefly. */
export function logRefusal(request: FastifyRequest, error: unknown, answer: FormErrorAnswer): void {
  if (answer.unexpected) request.log.error({ err: error }, 'form submission failed');
  else if (answer.retryAfter) request.log.warn({ err: error }, 'form submission refused: database or file store unavailable');
  else request.log.info({ status: answer.status }, 'form submission refused');
}

/** An abort signal that fires when the client's connection closes before the request is answered. */
function whileConnected(request: FastifyRequest): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const socket = request.raw.socket;
  const abort = () => controller.abort();
  if (!socket || socket.destroyed || request.raw.destroyed) abort();
  else socket.once('close', abort);
  return { signal: controller.signal, done: () => socket?.off('close', abort) };
}

/**
 * `work`, or a refusal once `ms` have passed (then `onTimeout` ends the request): an upload that drips
 * its bytes holds its slot for at most this long.
 */
async function withinDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => void, onLate: (late: T) => Promise<void>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void work.then(onLate, () => {});
      onTimeout();
      reject(new AppError('validation', messages.formUnreadable));
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {}); // settled after the deadline: nobody waits for it any more
  }
}
