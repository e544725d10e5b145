import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/**
 * Query parameters that are credentials: the single sign-on callback's authorization `code` and
 * `state` (issue 29), and what other OpenID responses may carry. Their values never reach the log.
 */
const SECRET_PARAMETERS = new Set(['code', 'state', 'id_token', 'access_token', 'session_state']);

/** `url` with the values of SECRET_PARAMETERS replaced by `[redacted]`. */
export function loggedUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = url.slice(at + 1);
  const kept = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // a malformed name is logged as sent
    }
    return SECRET_PARAMETERS.has(decoded) ? `${name}=[redacted]` : pair;
  });
  return `${url.slice(0, at)}?${kept.join('&')}`;
}

/**
 * One log line per request, when it completes, instead of Fastify's two (received, completed): at the
 * throughput of a form endpoint, logging is a large share of a small request.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: loggedUrl(request.url), statusCode: reply.statusCode, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}
