import { BlockList, isIP } from 'node:net';
import { AppError, message, messages } from '../errors.ts';
import { type Form, isHttpUrl } from '../forms/index.ts';
import { formatMegabytes } from './limits.ts';
import { maxMultipartBytes, type SubmissionLimits } from './submission-body.ts';

/** What admission looks at: the request before any of its body is read. */
export interface AdmissionRequest {
  /** The client address as the server trusts it (request.ip). */
  ip: string;
  origin: string | undefined;
  referer: string | undefined;
  contentType: string | undefined;
  contentLength: string | undefined;
}

/**
 * The rules a submission must pass before its body is read (contract D15, D16, D19), in the order
 * clients see them: the form accepts submissions, the website may post to it, the address is not
 * blocked, and a multipart body does not announce more bytes than the limits allow. Returns the
 * refusal, or undefined to read the body. (Unknown forms are refused before, by the lookup; the
 * honeypot and the per-field limits need the body: submission.ts and submission-body.ts.)
 */
export function admissionRefusal(
  form: Pick<Form, 'enabled' | 'websites' | 'blockedIps'>,
  request: AdmissionRequest,
  limits: SubmissionLimits,
): AppError | undefined {
  if (!form.enabled) return new AppError('conflict', messages.formDisabled);
  if (!isWebsiteAllowed(form.websites, requestOrigin(request.origin, request.referer))) return new AppError('forbidden', messages.formWebsiteNotAllowed);
  if (isIpBlocked(form.blockedIps, request.ip)) return new AppError('forbidden', messages.formIpBlocked);
  const declared = Number(request.contentLength ?? 0);
  const cap = maxMultipartBytes(limits);
  if (request.contentType?.toLowerCase().startsWith('multipart/') && declared > cap) {
    return new AppError('payload_too_large', message('formBodyTooLarge', { limit: formatMegabytes(cap) }));
  }
  return undefined;
}

/** Whether `ip` is one of the form's blocked addresses or ranges; IPv4-mapped IPv6 counts as IPv4. */
export function isIpBlocked(blockedIps: readonly string[], ip: string): boolean {
  if (blockedIps.length === 0) return false;
  const address = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(address);
  if (family === 0) return false;
  const list = new BlockList();
  for (const entry of blockedIps) {
    const [base, prefix] = entry.split('/');
    const type = isIP(base!) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(base!, type);
    else list.addSubnet(base!, Number(prefix), type);
  }
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The origin a submission comes from: the `Origin` header, else the origin of `Referer`. Browsers send
 * `Origin: null` from sandboxed or privacy-sensitive contexts; that counts as unknown.
 */
export function requestOrigin(origin: string | undefined, referer: string | undefined): string | undefined {
  if (origin && origin !== 'null' && isHttpUrl(origin)) return new URL(origin).origin;
  if (referer && isHttpUrl(referer)) return new URL(referer).origin;
  return undefined;
}

/** Contract D19: no listed websites allows any origin; otherwise only the listed ones (an unknown origin is refused). */
export function isWebsiteAllowed(websites: readonly string[], origin: string | undefined): boolean {
  return websites.length === 0 || (origin !== undefined && websites.includes(origin));
}
