import type { CaptchaProvider, CaptchaSettings } from '../forms/index.ts';

// CAPTCHA verification of form submissions (issue 12, docs/adr/0015-captcha.md). The token the
// provider's widget adds to the form is sent to the provider's siteverify endpoint with the form's
// secret and the client address, before anything is stored. It fails closed: no token, a refused
// token, a score under the form's minimum, or a verifier that does not answer a clear yes in time
// all refuse the submission.

/** The field each provider's widget posts its token in; it is never stored as data. */
export const TOKEN_FIELDS: Record<CaptchaProvider, string> = {
  turnstile: 'cf-turnstile-response',
  hcaptcha: 'h-captcha-response',
  recaptcha: 'g-recaptcha-response',
};

export interface CaptchaEndpoints {
  /** siteverify URL per provider (the providers' own by default; tests point them at a local server). */
  urls: Record<CaptchaProvider, string>;
  /** Longest wait for a verifier's answer, in ms (at most 10 s). */
  timeoutMs: number;
}

/** Why a submission was refused: no token, a refused token (or score), or no clear answer from the verifier. */
export type CaptchaRefusal = 'missing' | 'failed' | 'unavailable';

/** Where a verifier that does not answer is reported (never with the secret or the token). */
export interface CaptchaLog {
  warn(obj: object, msg: string): void;
}

export class CaptchaVerifier {
  constructor(
    private readonly endpoints: CaptchaEndpoints,
    private readonly log: CaptchaLog,
  ) {}

  /**
   * Takes the token out of `data` (it is not kept with the submission) and verifies it; undefined when it
   * passes, else why it did not.
   */
  async check(captcha: CaptchaSettings, data: Record<string, unknown>, remoteIp: string | null): Promise<CaptchaRefusal | undefined> {
    const field = TOKEN_FIELDS[captcha.provider];
    const token = data[field];
    delete data[field];
    if (typeof token !== 'string' || token.trim() === '' || token.length > 10_000) return 'missing';
    const body = new URLSearchParams({ secret: captcha.secret, response: token });
    if (remoteIp) body.set('remoteip', remoteIp);
    let answer: { success?: unknown; score?: unknown };
    try {
      const res = await fetch(this.endpoints.urls[captcha.provider], {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(this.endpoints.timeoutMs),
      });
      if (!res.ok) {
        await res.body?.cancel();
        return this.unavailable(captcha, `the verifier answered ${res.status}`);
      }
      answer = (await res.json()) as typeof answer;
    } catch (error) {
      // Timeout, connection refused, a body that is not JSON: no clear answer, so no submission.
      const name = (error as Error)?.name;
      return this.unavailable(captcha, name === 'TimeoutError' ? `no answer within ${this.endpoints.timeoutMs} ms` : `no usable answer (${name ?? 'error'})`);
    }
    if (answer === null || typeof answer !== 'object') return this.unavailable(captcha, 'the answer is not a JSON object');
    if (answer.success !== true) return 'failed';
    const minScore = captcha.minScore ?? null;
    if (minScore !== null && !(typeof answer.score === 'number' && answer.score >= minScore)) return 'failed';
    return undefined;
  }

  private unavailable(captcha: CaptchaSettings, reason: string): CaptchaRefusal {
    this.log.warn({ provider: captcha.provider, reason }, 'CAPTCHA verifier unavailable: submission refused');
    return 'unavailable';
  }
}
