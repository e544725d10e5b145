import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { newId } from '../db/codec.ts';
import { AppError, message } from '../errors.ts';
import type { ReceivedFile } from '../files/index.ts';
import type { FilePolicy } from '../forms/index.ts';
import { detectType, type FileLimits, fileLimitsOf, isAllowedType, SNIFF_BYTES } from './file-policy.ts';
import { FieldCollector, type IncomingFile } from './submission.ts';
import { formatSize } from './limits.ts';
import type { SubmissionLimits } from './limits.ts';

export type { SubmissionLimits } from './limits.ts';

/** Where the files of a multipart body go while it is read (SubmissionService, over FileStorage). */
export interface FileReceiver {
  receiveFile(id: string, source: AsyncIterable<Buffer>, contentType: string): Promise<ReceivedFile>;
  discardFiles(files: readonly ReceivedFile[]): Promise<void>;
}

/** Longest field name, in characters, on every encoding. */
export const MAX_FIELD_NAME_LENGTH = 200;

/** "1.00MB" as in the specification's 413 message; 1 MB = 1,048,576 bytes (contract D16). */

/** The largest multipart body the limits allow, with room for part headers; a larger Content-Length is refused unread. */
export function maxMultipartBytes(limits: SubmissionLimits): number {
  const partOverhead = 1024;
  return limits.maxFiles * (limits.maxFileBytes + partOverhead) + limits.maxFields * (limits.maxFieldBytes + partOverhead) + 64 * 1024;
}

const tooManyFiles = (limits: SubmissionLimits) => new AppError('payload_too_large', message('formTooManyFiles', { max: limits.maxFiles }));
const tooManyFields = (limits: SubmissionLimits) => new AppError('payload_too_large', message('formTooManyFields', { max: limits.maxFields }));
const fieldTooLarge = (field: string, limits: SubmissionLimits) =>
  new AppError('payload_too_large', message('formFieldTooLarge', { field: field.slice(0, 100), limit: formatSize(limits.maxFieldBytes) }));
export const unreadable = () => new AppError('validation', message('formUnreadable'));
const nameTooLong = () => new AppError('payload_too_large', message('formFieldNameTooLong', { max: MAX_FIELD_NAME_LENGTH }));
const textTooLarge = (limits: SubmissionLimits) => new AppError('payload_too_large', message('formTextTooLarge', { limit: formatSize(limits.maxTextBytes) }));

/** Adds up the text of a submission as it is read; throws once it passes the limit. */
class TextBudget {
  private used = 0;
  constructor(private readonly limits: SubmissionLimits) {}
  add(name: string, valueBytes: number): void {
    if (name.length > MAX_FIELD_NAME_LENGTH) throw nameTooLong();
    this.used += Buffer.byteLength(name) + valueBytes;
    if (this.used > this.limits.maxTextBytes) throw textTooLarge(this.limits);
  }
}

/**
 * Parses an application/x-www-form-urlencoded body, counting fields while it goes: a body of a million
 * tiny fields is refused at field maxFields + 1, not after all of them were decoded (issue 8). Repeated
 * names keep every value, as an array; a malformed percent-encoding is kept as sent.
 */
export function parseUrlencoded(body: string, limits: SubmissionLimits): Record<string, unknown> {
  const fields = new FieldCollector();
  const budget = new TextBudget(limits);
  let count = 0;
  let start = 0;
  while (start <= body.length) {
    let end = body.indexOf('&', start);
    if (end === -1) end = body.length;
    if (end > start) {
      if (++count > limits.maxFields) throw tooManyFields(limits);
      const pair = body.slice(start, end);
      const eq = pair.indexOf('=');
      const name = decodeFormComponent(eq === -1 ? pair : pair.slice(0, eq));
      const value = eq === -1 ? '' : decodeFormComponent(pair.slice(eq + 1));
      const size = Buffer.byteLength(value);
      if (size > limits.maxFieldBytes) throw fieldTooLarge(name, limits);
      budget.add(name, size);
      fields.add(name, value);
    }
    start = end + 1;
  }
  return fields.toObject();
}

function decodeFormComponent(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * Field names that are prototype machinery in JavaScript. Each body parser treated them differently
 * (JSON refused `__proto__`, urlencoded forwarded it, multipart refused `constructor`), so one rule
 * for all three encodings refuses them (issue 8).
 */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export interface ReadBody {
  data: Record<string, unknown>;
  files: IncomingFile[];
}

/**
 * Checks a parsed JSON or urlencoded body against the field limits. JSON must be an object; each
 * top-level name is a field. Urlencoded repeated names arrive as arrays and count once per value.
 */
export function readParsedBody(body: unknown, urlencoded: boolean, limits: SubmissionLimits): ReadBody {
  if (body === undefined) return { data: {}, files: [] };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw unreadable();
  const entries = Object.entries(body as Record<string, unknown>);
  const budget = new TextBudget(limits);
  let count = 0;
  for (const [name, value] of entries) {
    if (RESERVED_FIELD_NAMES.has(name)) throw unreadable();
    const values = urlencoded && Array.isArray(value) ? value : [value];
    count += values.length;
    if (count > limits.maxFields) throw tooManyFields(limits);
    for (const one of values) {
      const size = Buffer.byteLength(typeof one === 'string' ? one : (JSON.stringify(one) ?? ''));
      if (size > limits.maxFieldBytes) throw fieldTooLarge(name, limits);
      budget.add(name, size);
    }
  }
  return { data: Object.fromEntries(entries), files: [] };
}

/**
 * Reads a multipart body part by part, enforcing every limit while it streams (contract D16): a file is
 * read only up to one byte past its limit and the request is abandoned right there. Each file goes to
 * `storage` while it is read (issue 19); when the body fails, what was stored is discarded. A file part
 * with an empty name and no content (an unused file input of an HTML form) is skipped.
 */
export async function readMultipart(
  request: FastifyRequest,
  uploadsEnabled: boolean,
  limits: SubmissionLimits,
  storage: FileReceiver,
  policy: FilePolicy | null = null,
): Promise<ReadBody> {
  const fields = new FieldCollector();
  const budget = new TextBudget(limits);
  const files: IncomingFile[] = [];
  // The form's file policy narrows the instance limits (issue 34); without one they are the instance's.
  const fileLimits = fileLimitsOf(limits, policy);
  const total = { bytes: 0 };
  const parts = request.parts({
    limits: {
      fileSize: fileLimits.maxFileBytes + 1,
      // Backstops only: the exact counts are checked below, where empty file inputs do not count.
      files: limits.maxFiles + 20,
      fields: limits.maxFields,
      fieldSize: limits.maxFieldBytes,
      // One character over, so that a longer name is told apart (fieldnameTruncated).
      fieldNameSize: MAX_FIELD_NAME_LENGTH + 1,
      parts: limits.maxFields + limits.maxFiles + 20,
    },
    throwFileSizeLimit: false,
    // A part with a file name, or with a content type that is not text, is a file: a scan sent as
    // `Content-Type: application/pdf` without a file name must not become a text field.
    isPartAFile: (_field: string | undefined, contentType: string | undefined, fileName: string | undefined) =>
      fileName !== undefined || (contentType !== undefined && !contentType.toLowerCase().startsWith('text/')),
  } as Parameters<FastifyRequest['parts']>[0]);
  /** Stores one file part while it is read, then holds its detected type against the policy. */
  const receive = async (part: MultipartFile, chunks: AsyncIterator<Buffer>, name: string, first?: Buffer) => {
    const id = newId();
    const contentType = part.mimetype || 'application/octet-stream';
    const head: Buffer[] = [];
    const received = await storage.receiveFile(id, withinLimit(name, chunks, fileLimits, total, head, first), contentType);
    // Listed before the type check: a refused file is discarded with the others.
    files.push({ id, field: part.fieldname, name, contentType, received });
    if (fileLimits.allowedTypes.length > 0 && !isAllowedType(await detectType(Buffer.concat(head)), fileLimits.allowedTypes)) {
      throw fileLimits.typeNotAllowed(name);
    }
  };
  try {
    for await (const part of parts as AsyncIterableIterator<Multipart>) {
      // PostgreSQL text cannot hold NUL; refusing it keeps both engines answering alike.
      if (hasNul(part.fieldname) || (part.type === 'file' && (hasNul(part.filename) || hasNul(part.mimetype)))) throw unreadable();
      // A part without a name is no field of the form (the parser would call it "undefined").
      if (typeof part.fieldname !== 'string' || part.fieldname === '' || RESERVED_FIELD_NAMES.has(part.fieldname)) throw unreadable();
      if (part.type === 'field') {
        if (part.fieldnameTruncated) throw nameTooLong();
        if (part.valueTruncated) throw fieldTooLarge(part.fieldname, limits);
        if (typeof part.value === 'string' && hasNul(part.value)) throw unreadable();
        budget.add(part.fieldname, typeof part.value === 'string' ? Buffer.byteLength(part.value) : 0);
        fields.add(part.fieldname, part.value);
        continue;
      }
      if (part.fieldname.length > MAX_FIELD_NAME_LENGTH) throw nameTooLong();
      if (part.filename && !uploadsEnabled) throw new AppError('forbidden', message('formUploadsDisabled'));
      if (part.filename && files.length >= fileLimits.maxFiles) throw fileLimits.tooManyFiles();
      const chunks = (part.file as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      if (!part.filename) {
        // An unnamed part may be an unused file input: nothing is stored until it has a first byte.
        const first = await firstChunk(chunks);
        if (first === undefined) continue;
        if (!uploadsEnabled) throw new AppError('forbidden', message('formUploadsDisabled'));
        if (files.length >= fileLimits.maxFiles) throw fileLimits.tooManyFiles();
        await receive(part, chunks, part.fieldname, first);
        continue;
      }
      await receive(part, chunks, part.filename);
    }
  } catch (error) {
    await storage.discardFiles(files.map((f) => f.received));
    throw toLimitError(error, limits);
  }
  return { data: fields.toObject(), files };
}

const hasNul = (text: string | undefined): boolean => text?.includes('\u0000') === true;

/** The first non-empty chunk of a file part, or undefined when the part is empty (read to its end). */
async function firstChunk(chunks: AsyncIterator<Buffer>): Promise<Buffer | undefined> {
  for (;;) {
    const next = await chunks.next();
    if (next.done) return undefined;
    if (next.value.length > 0) return next.value;
  }
}

/**
 * A file part's bytes (`first`, when given, then the rest), refused one byte past the file limit or the
 * form's total; its first SNIFF_BYTES are kept in `head` for the type check.
 */
async function* withinLimit(
  name: string,
  chunks: AsyncIterator<Buffer>,
  limits: FileLimits,
  total: { bytes: number },
  head: Buffer[],
  first?: Buffer,
): AsyncGenerator<Buffer> {
  let size = 0;
  const take = (chunk: Buffer) => {
    if (size < SNIFF_BYTES) head.push(chunk.subarray(0, SNIFF_BYTES - size));
    size += chunk.length;
    total.bytes += chunk.length;
    if (size > limits.maxFileBytes) throw limits.fileTooLarge(name);
    if (limits.maxTotalBytes !== null && total.bytes > limits.maxTotalBytes) throw limits.totalTooLarge();
    return chunk;
  };
  if (first) yield take(first);
  for (;;) {
    const next = await chunks.next();
    if (next.done) return;
    yield take(next.value);
  }
}

function toLimitError(error: unknown, limits: SubmissionLimits): unknown {
  if (error instanceof AppError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_FILES_LIMIT') return tooManyFiles(limits);
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') return tooManyFields(limits);
  // Malformed multipart, a missing boundary, a truncated body or a prototype-polluting name.
  return unreadable();
}
