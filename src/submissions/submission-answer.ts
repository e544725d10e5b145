import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, message, messages } from '../errors.ts';
import { toErrorAnswer } from '../http/error-handler.ts';
import { type Form, isHttpUrl } from '../forms/index.ts';
import { formatSize } from './limits.ts';

/** What the submission endpoint knows about a request before its body is read. */
export interface FormRequestContext {
  /** `mode=rest`: JSON answers; otherwise 303 redirects (contract D14). */
  rest: boolean;
  form: Form | undefined;
  /** Where the result pages' "go back" link leads (goBackUrlOf). */
  goBackUrl: string | undefined;
}

export const BUILT_IN_SUCCESS_PATH = '/v1/s/success';
export const BUILT_IN_ERROR_PATH = '/v1/s/error';

/** `base` with `message`, `goBackUrl` (and `sig`) appended as percent-encoded query parameters (contract D14). */
export function withResultParams(base: string, text: string, goBackUrl: string | undefined, sig?: string): string {
  const url = new URL(base);
  const params = [`message=${encodeURIComponent(text)}`];
  if (goBackUrl) params.push(`goBackUrl=${encodeURIComponent(goBackUrl)}`);
  if (sig) params.push(`sig=${sig}`);
  url.search = [url.search.replace(/^\?/, ''), ...params].filter(Boolean).join('&');
  return url.toString();
}

/**
 * The result page URLs of submissions. Links to Flagpost's built-in pages carry `sig`, an HMAC of the
 * message and the go-back target under a key of this deployment: the pages show only what Flagpost
 * itself issued, so nobody can put their own text or link on Flagpost's origin (issue 8). The form's
 * own pages get the parameters of contract D14 unsigned.
 */
export class ResultLinks {
  constructor(
    private readonly publicUrl: string,
    private readonly key: Buffer,
  ) {}

  success(ctx: FormRequestContext): string {
    return this.link(ctx.form?.successUrl, BUILT_IN_SUCCESS_PATH, messages.formSubmitted, ctx.goBackUrl);
  }

  error(ctx: FormRequestContext, text: string): string {
    return this.link(ctx.form?.errorUrl, BUILT_IN_ERROR_PATH, text, ctx.goBackUrl);
  }

  /** True when `sig` is the signature of this message and go-back target. */
  verify(text: string, goBackUrl: string | undefined, sig: string | undefined): boolean {
    if (!sig) return false;
    const expected = Buffer.from(this.sign(text, goBackUrl));
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private link(own: string | null | undefined, builtIn: string, text: string, goBackUrl: string | undefined): string {
    if (own) return withResultParams(own, text, goBackUrl);
    return withResultParams(`${this.publicUrl}${builtIn}`, text, goBackUrl, this.sign(text, goBackUrl));
  }

  private sign(text: string, goBackUrl: string | undefined): string {
    return createHmac('sha256', this.key)
      .update(`${text}\n${goBackUrl ?? ''}`)
      .digest('base64url')
      .slice(0, 22);
  }
}

/**
 * Where the "go back" link of a submission's result pages leads: the form's redirectUrl, else the
 * submitting page when it is on one of the form's websites. A form open to any website has no origin
 * of its own, so its Referer's path never becomes a link (issue 8); the Referer's origin does (the site the
 * visitor came from, issue 31 item 15).
 */
export function goBackUrlOf(form: Form | undefined, referer: string | undefined): string | undefined {
  if (form?.redirectUrl) return form.redirectUrl;
  if (!form || !referer || !isHttpUrl(referer)) return undefined;
  const origin = new URL(referer).origin;
  // A form open to any website links back to the origin the submission came from, never to a path on it:
  // the visitor returns to the site they were on (issue 31 item 15), and nothing else of the Referer shows.
  if (form.websites.length === 0) return `${origin}/`;
  return form.websites.includes(origin) ? referer : undefined;
}

export interface FormErrorAnswer {
  status: number;
  message: string;
  unexpected: boolean;
  retryAfter?: number;
  /** The refused fields of a 422 (field rules). */
  fieldErrors?: FieldErrorEntry[];
}

export interface FieldErrorEntry {
  field: string;
  code: string;
  message: string;
}

/**
 * The status and message of a refused submission (contract D15). AppErrors keep theirs; Fastify's own
 * body errors are named in the form interface's words; anything else is the generic 500 (contract D8).
 */
export function formErrorOf(error: unknown, bodyLimit: number): FormErrorAnswer {
  if (error instanceof AppError)
    return {
      status: error.status,
      message: error.message,
      unexpected: false,
      retryAfter: error.options.retryAfterSeconds,
      fieldErrors: error.options.fieldErrors,
    };
  const code = (error as Partial<FastifyError>).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, message: message('formBodyTooLarge', { limit: formatSize(bodyLimit) }), unexpected: false };
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { status: 415, message: messages.formUnsupportedMediaType, unexpected: false };
  const answer = toErrorAnswer(error, 'forms');
  if (answer.status === 429) return { status: 429, message: messages.tooManyRequests, unexpected: false };
  if (answer.status === 408) return { status: 408, message: messages.requestTimeout, unexpected: false };
  if (answer.status >= 400 && answer.status < 500) return { status: 400, message: messages.formUnreadable, unexpected: false };
  if (answer.retryAfter) return { status: 503, message: messages.serviceUnavailable, unexpected: false, retryAfter: answer.retryAfter };
  return { status: answer.status, message: messages.generic, unexpected: answer.unexpected };
}

/** Bytes of a refused body read and thrown away after the answer, at most, so that the client sees it. */
export const LINGER_MAX_BYTES = 10 * 1024 * 1024;
/** How long a refused body may take to arrive after the answer before its connection is cut. */
export const LINGER_MAX_MS = 5000;

/**
 * What happens to the rest of a body refused before its end (contract D16, issue 8). Closing the
 * connection at once while the client still sends makes the kernel answer the unread bytes with a reset,
 * and the client often sees that instead of the 413 (a browser shows a network error page). So, as
 * nginx's lingering close, the rest is read and thrown away, never stored, and the connection stays
 * open; past LINGER_MAX_BYTES or LINGER_MAX_MS it is cut. A body that announces more than
 * LINGER_MAX_BYTES is not waited for at all: its connection closes after the answer.
 */
export function abandonUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  if (raw.complete) return;
  raw.unpipe();
  if (Number(request.headers['content-length'] ?? 0) > LINGER_MAX_BYTES) {
    raw.pause();
    reply.header('connection', 'close');
    return;
  }
  let discarded = 0;
  // A timer must never throw: an injected request (tests) has a socket without destroy().
  const cut = () => (typeof raw.socket?.destroy === 'function' ? raw.socket.destroy() : raw.destroy());
  const timer = setTimeout(cut, LINGER_MAX_MS);
  timer.unref();
  raw.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

/** Answers a refused submission: the error object with `code` and `url` in rest mode, else a 303 to the error page. */
export function sendFormError(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: FormRequestContext,
  links: ResultLinks,
  status: number,
  text: string,
  fieldErrors?: FieldErrorEntry[],
) {
  abandonUnreadBody(request, reply);
  const url = links.error(ctx, text);
  reply.header('cache-control', 'no-store');
  if (ctx.rest) return reply.code(status).send({ error: true, code: status, message: text, url, ...(fieldErrors ? { errors: fieldErrors } : {}) });
  return reply.code(303).header('location', url).type('text/plain; charset=utf-8').send(`See ${url}`);
}
