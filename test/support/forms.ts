import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { SMTPServer } from 'smtp-server';
import type { TestContext } from './context.ts';

export async function createForm(ctx: TestContext, body: Record<string, unknown> = {}) {
  const res = await ctx.admin('POST', '/admin/v1/forms', { name: 'Contact', ...body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { key: string; name: string; webhookSecret?: string } & Record<string, unknown>;
}

export type Part = { name: string; value: string; contentType?: string } | { name: string; filename: string; content: Buffer | string; contentType?: string };

/** A multipart/form-data body built byte by byte, so tests control every header and size. */
export function multipart(parts: Part[], boundary = `----flagpost${randomBytes(8).toString('hex')}`) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if ('filename' in part) head += `; filename="${part.filename}"\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}`;
    else if (part.contentType) head += `\r\nContent-Type: ${part.contentType}`;
    chunks.push(Buffer.from(`${head}\r\n\r\n`), Buffer.from('filename' in part ? part.content : part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface SubmitOptions {
  rest?: boolean;
  headers?: Record<string, string>;
}

export function submitJson(ctx: TestContext, formKey: string, body: unknown, options: SubmitOptions = {}): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url: `/v1/s/${formKey}${options.rest === false ? '' : '?mode=rest'}`,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function submitUrlencoded(ctx: TestContext, formKey: string, body: string, options: SubmitOptions = {}): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url: `/v1/s/${formKey}${options.rest ? '?mode=rest' : ''}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    payload: body,
  });
}

export function submitMultipart(ctx: TestContext, formKey: string, parts: Part[], options: SubmitOptions = {}): Promise<LightMyRequestResponse> {
  const { payload, contentType } = multipart(parts);
  return ctx.app.inject({
    method: 'POST',
    url: `/v1/s/${formKey}${options.rest === false ? '' : '?mode=rest'}`,
    headers: { 'content-type': contentType, ...options.headers },
    payload,
  });
}

export async function listSubmissions(ctx: TestContext, formKey: string, query = '') {
  const res = await ctx.admin('GET', `/admin/v1/forms/${formKey}/submissions${query}`);
  assert.equal(res.statusCode, 200, res.body);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the rows' fields freely; the schema check covers their shape
  return res.json() as { submissions: Array<Record<string, any>>; nextCursor: string | null };
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => T | false | undefined | Promise<T | false | undefined>, timeoutMs = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A real HTTP receiver on loopback that answers the scripted statuses in turn, then 200. */
export async function startWebhookReceiver(statuses: number[] = []) {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.statusCode = statuses.shift() ?? 200;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Verifies a Standard Webhooks signature as a receiver would, independently of Flagpost's code. */
export function verifyWebhook(secret: string, headers: http.IncomingHttpHeaders, body: string): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = String(headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return String(headers['webhook-signature'])
    .split(' ')
    .some((sig) => sig === `v1,${expected}`);
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server (smtp-server) on loopback that keeps every message. */
export async function startSmtpServer() {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
