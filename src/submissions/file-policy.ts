import { fileTypeFromBuffer } from 'file-type';
import { AppError, message } from '../errors.ts';
import type { FilePolicy } from '../forms/index.ts';
import { formatMegabytes, formatSize } from './limits.ts';
import type { SubmissionLimits } from './limits.ts';

// A form's file policy (issue 34): types detected from a file's first bytes by `file-type` (never from
// its name or the content type the client sent), and limits within the instance's. Forms without a
// policy keep the instance limits and their messages exactly (contract D16).

/** Bytes of a file's beginning kept for detection: what file-type reads for its signatures. */
export const SNIFF_BYTES = 4100;

/**
 * The MIME type of a file from its first bytes: file-type's answer, else `text/plain` for valid UTF-8
 * without control bytes (text has no signature), else `application/octet-stream`.
 */
export async function detectType(head: Buffer): Promise<string> {
  const found = await fileTypeFromBuffer(head);
  if (found) return found.mime;
  return looksLikeText(head) ? 'text/plain' : 'application/octet-stream';
}

function looksLikeText(head: Buffer): boolean {
  if (head.length === 0) return true;
  // A multi-byte character cut at the end of the sniffed bytes is not a reason to call the file binary.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head);
  const body = text.replace(/\uFFFD{1,3}$/, '');
  // eslint-disable-next-line no-control-regex -- control bytes (other than tab, line breaks, form feed) mark binary data
  return !body.includes('\uFFFD') && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(body);
}

/** Whether `type` is one of `allowed` (`image/png`, or a family `image/*`); an empty list allows any. */
export function isAllowedType(type: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  const family = `${type.split('/')[0]}/*`;
  return allowed.includes(type) || allowed.includes(family);
}

/** The limits of one submission's files: the instance's, narrowed by the form's policy. */
export interface FileLimits {
  maxFileBytes: number;
  maxFiles: number;
  /** null: no total beyond what the per-file and count limits make. */
  maxTotalBytes: number | null;
  allowedTypes: readonly string[];
  /** The refusal of a file over maxFileBytes: the instance's exact text (contract D16), or the policy's. */
  fileTooLarge(fileName: string): AppError;
  tooManyFiles(): AppError;
  totalTooLarge(): AppError;
  typeNotAllowed(fileName: string): AppError;
}

export function fileLimitsOf(limits: SubmissionLimits, policy: FilePolicy | null): FileLimits {
  const maxFileBytes = Math.min(limits.maxFileBytes, policy?.maxFileBytes ?? Infinity);
  const maxFiles = Math.min(limits.maxFiles, policy?.maxFiles ?? Infinity);
  const maxTotalBytes = policy?.maxTotalBytes ?? null;
  // The seed's text stays for the instance limit; a smaller limit of the form is written in its own unit.
  const shownFileLimit = maxFileBytes === limits.maxFileBytes ? formatMegabytes(maxFileBytes) : formatSize(maxFileBytes);
  return {
    maxFileBytes,
    maxFiles,
    maxTotalBytes,
    allowedTypes: policy?.allowedTypes ?? [],
    fileTooLarge: (fileName) => new AppError('payload_too_large', message('formFileTooLarge', { fileName: fileName.slice(0, 100), limit: shownFileLimit })),
    tooManyFiles: () => new AppError('payload_too_large', message('formTooManyFiles', { max: maxFiles })),
    totalTooLarge: () => new AppError('payload_too_large', message('formFilesTooLarge', { limit: formatSize(maxTotalBytes ?? 0) })),
    typeNotAllowed: (fileName) => new AppError('unsupported_media_type', message('formFileTypeNotAllowed', { fileName: fileName.slice(0, 100) })),
  };
}
