import { createHash, timingSafeEqual } from 'node:crypto';

export interface ApiKey {
  id: string;
  projectId: string;
  name: string;
  tokenPrefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export const TOKEN_PREFIX = 'fpk_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares two hex hashes in constant time (contract D11). */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export const apiKeyView = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  prefix: k.tokenPrefix,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
});
