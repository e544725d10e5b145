import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Every bearer secret Flagpost issues (admin token, sessions, invitations, personal access tokens,
 * project API keys) is kept as its SHA-256 hash only (contract D11): the tokens are 128 to 256 random
 * bits, so a plain hash is enough and a stolen table gives no token back.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares two hex hashes in constant time (contract D11). */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
