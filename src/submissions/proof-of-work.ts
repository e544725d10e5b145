import { createHmac } from 'node:crypto';
import { type Challenge, createChallenge, type Solution, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';

// The self-hosted proof-of-work check (issue 34, docs/adr/0046-spam-checks.md): ALTCHA's server library
// makes and verifies the challenges, no third party is involved. The ALTCHA widget (or any client of
// altcha-lib) fetches a challenge from GET /v1/s/{formKey}/challenge, solves it in the browser and sends
// the solution in the `altcha` field: base64 of `{"challenge":...,"solution":...}`.

/** The field the ALTCHA widget posts its solution in. */
export const POW_FIELD = 'altcha';
/** How long a challenge may be solved and sent. */
export const POW_TTL_SECONDS = 10 * 60;
/** About 16^4 = 65,536 SHA-256 derivations on average: a moment for one visitor, a cost for a flood. */
const KEY_PREFIX = '0000';
const ALGORITHM = 'SHA-256';

/** The two HMAC secrets of the challenges, derived from the instance key (shared by every instance). */
function secrets(instanceKey: Buffer) {
  const derive = (label: string) => createHmac('sha256', instanceKey).update(label).digest('hex');
  return { signature: derive('altcha challenge signature') };
}

/** A new signed challenge for a form's page. */
export async function newChallenge(instanceKey: Buffer, formKey: string, nowMs: number): Promise<Challenge> {
  return createChallenge({
    algorithm: ALGORITHM,
    cost: 1,
    deriveKey,
    keyPrefix: KEY_PREFIX,
    expiresAt: Math.floor(nowMs / 1000) + POW_TTL_SECONDS,
    data: { form: formKey },
    hmacSignatureSecret: secrets(instanceKey).signature,
  });
}

/** What the `altcha` field proved: a verified, unexpired solution for this form (its signature is its identity), or why not. */
export type ProofOfWork = { ok: true; signature: string; expiresAt: number } | { ok: false; why: 'missing' | 'failed' };

export async function checkProofOfWork(instanceKey: Buffer, formKey: string, field: unknown): Promise<ProofOfWork> {
  if (typeof field !== 'string' || field.trim() === '') return { ok: false, why: 'missing' };
  if (field.length > 10_000) return { ok: false, why: 'failed' };
  let payload: { challenge?: Challenge; solution?: Solution };
  try {
    payload = JSON.parse(Buffer.from(field, 'base64').toString('utf8')) as typeof payload;
  } catch {
    return { ok: false, why: 'failed' };
  }
  const { challenge, solution } = payload ?? {};
  if (!challenge?.parameters || typeof challenge.signature !== 'string' || !solution || challenge.parameters.data?.form !== formKey) {
    return { ok: false, why: 'failed' };
  }
  try {
    const result = await verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: secrets(instanceKey).signature });
    if (!result.verified || result.expired) return { ok: false, why: 'failed' };
  } catch {
    return { ok: false, why: 'failed' };
  }
  return { ok: true, signature: challenge.signature, expiresAt: challenge.parameters.expiresAt ?? 0 };
}
