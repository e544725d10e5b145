import { randomBytes, scrypt as scryptCallback, type ScryptOptions, timingSafeEqual } from 'node:crypto';

// Password hashing with node:crypto's scrypt (docs/adr/0021-accounts-and-roles.md): N = 2^15, r = 8,
// p = 1 (OWASP's minimum for scrypt), a 16-byte random salt and a 32-byte key. The parameters are stored
// with each hash, so they can be raised later without invalidating existing passwords.

/** scrypt's cost parameters; each hash records the ones it was made with. */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/** What every new password gets in production. Tests pass a cheaper one (compose's `scryptCost` port). */
export const DEFAULT_SCRYPT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))));
}

export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const { N, r, p } = cost;
  const salt = randomBytes(16);
  // scrypt needs 128 * N * r bytes; the default limit (32 MiB) is exactly that for N = 2^15, so allow twice.
  const key = await scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem: 128 * N * r * 2 });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** True when `password` matches `stored`; a malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (!Number.isInteger(n) || !Number.isInteger(r) || !Number.isInteger(p) || expected.length === 0) return false;
  const key = await scrypt(password, salt, expected.length, { N: n, r, p, maxmem: 128 * n * r * 2 });
  return timingSafeEqual(key, expected);
}

/** A hash of no password, checked when the e-mail is unknown, so that sign-in takes as long either way. */
export function noUserHash({ N, r, p }: ScryptCost = DEFAULT_SCRYPT_COST): string {
  return `scrypt$${N}$${r}$${p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`;
}
