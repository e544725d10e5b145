import type { CookieSerializeOptions } from '@fastify/cookie';

/**
 * The dashboard's session cookie (issue 9): HttpOnly (no script reads it), SameSite=Strict (no other
 * site sends it), Secure with the `__Host-` prefix when Flagpost is served over https (the browser
 * then refuses it over http and from any other host or path).
 */
export interface SessionCookie {
  name: string;
  options: CookieSerializeOptions;
}

export function sessionCookieOf(publicUrl: string, ttlMs: number): SessionCookie {
  const secure = new URL(publicUrl).protocol === 'https:';
  return {
    name: secure ? '__Host-flagpost_session' : 'flagpost_session',
    options: { httpOnly: true, sameSite: 'strict', secure, path: '/', maxAge: Math.floor(ttlMs / 1000) },
  };
}
