import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, message, messages } from '../errors.ts';
import { toErrorAnswer } from '../http/error-handler.ts';
import { type Form, isHttpUrl } from '../forms/index.ts';
import { formatSize } from './submission-body.ts';

/** What the submission endpoint knows about a request before its body is read. */
export interface FormRequestContext {
  /** `mode=rest`: JSON answers; otherwise 303 redirects (contract D14). */
  rest: boolean;
  form: Form | undefined;
  /** Where the result pages' "go back" link leads: the form's redirectUrl, else the submitting page. */
  goBackUrl: string | undefined;
}

export const BUILT_IN_SUCCESS_PATH = '/v1/s/success';
export const BUILT_IN_ERROR_PATH = '/v1/s/error';

/** `base` with `message` and `goBackUrl` appended as percent-encoded query parameters (contract D14). */
export function withResultParams(base: string, text: string, goBackUrl: string | undefined): string {
  const url = new URL(base);
  const params = [`message=${encodeURIComponent(text)}`];
  if (goBackUrl) params.push(`goBackUrl=${encodeURIComponent(goBackUrl)}`);
  url.search = [url.search.replace(/^\?/, ''), ...params].filter(Boolean).join('&');
  return url.toString();
}

export function successUrl(publicUrl: string, ctx: FormRequestContext): string {
  return withResultParams(ctx.form?.successUrl ?? `${publicUrl}${BUILT_IN_SUCCESS_PATH}`, messages.formSubmitted, ctx.goBackUrl);
}

export function errorUrl(publicUrl: string, ctx: FormRequestContext, text: string): string {
  return withResultParams(ctx.form?.errorUrl ?? `${publicUrl}${BUILT_IN_ERROR_PATH}`, text, ctx.goBackUrl);
}

export function goBackUrlOf(form: Form | undefined, referer: string | undefined): string | undefined {
  if (form?.redirectUrl) return form.redirectUrl;
  return referer && isHttpUrl(referer) ? referer : undefined;
}

/**
 * The status and message of a refused submission (contract D15). AppErrors keep theirs; Fastify's own
 * body errors are named in the form interface's words; anything else is the generic 500 (contract D8).
 */
export function formErrorOf(error: unknown, bodyLimit: number): { status: number; message: string; unexpected: boolean; retryAfter?: number } {
  if (error instanceof AppError) return { status: error.status, message: error.message, unexpected: false };
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

/**
 * Stops reading a body that was refused before its end (contract D16): the rest is not read and the
 * connection closes once the answer is written, instead of Node draining the upload to keep it alive.
 */
export function abandonUnreadBody(request: FastifyRequest, reply: FastifyReply): void {
  if (request.raw.complete) return;
  request.raw.unpipe();
  request.raw.pause();
  reply.header('connection', 'close');
}

/** Answers a refused submission: the error object with `code` and `url` in rest mode, else a 303 to the error page. */
export function sendFormError(request: FastifyRequest, reply: FastifyReply, ctx: FormRequestContext, publicUrl: string, status: number, text: string) {
  abandonUnreadBody(request, reply);
  const url = errorUrl(publicUrl, ctx, text);
  reply.header('cache-control', 'no-store');
  if (ctx.rest) return reply.code(status).send({ error: true, code: status, message: text, url });
  return reply.code(303).header('location', url).type('text/plain; charset=utf-8').send(`See ${url}`);
}
