import type { FastifyInstance, FastifyRequest } from 'fastify';

// Flag evaluations as span events (issue 23): every flag an answer of the read path carries becomes a
// `feature_flag.evaluation` event on the request's server span, with OpenTelemetry's feature-flag
// semantic-convention attributes. Read from the answer Flagpost sends, so that no route changes and the
// events say exactly what the client got. Registered only while tracing is on (tracing.ts).

const PROVIDER = 'Flagpost';
const EVENT = 'feature_flag.evaluation';

/** The routes whose answers are flag evaluations, by route template. */
const READ_ROUTES = new Set(['/v1/flags', '/v1/flags/', '/v1/flags/:slug', '/ofrep/v1/evaluate/flags', '/ofrep/v1/evaluate/flags/:key']);

type Attributes = Record<string, string | number | boolean>;

interface OfrepAnswer {
  key?: string;
  reason?: string;
  variant?: string;
  errorCode?: string;
  errorDetails?: string;
}

interface V1Flag {
  slug?: string;
  enabled?: boolean;
}

/** OFREP's reason in the convention's words (lower case: `static`, `targeting_match`, `split`, `disabled`, `default`, `error`, ...). */
const reasonOf = (answer: OfrepAnswer) => (answer.errorCode ? 'error' : (answer.reason ?? 'unknown').toLowerCase());

function ofrepAttributes(answer: OfrepAnswer, setId: string | undefined, contextId: string | undefined): Attributes {
  const attributes: Attributes = {
    'feature_flag.key': answer.key ?? '',
    'feature_flag.provider.name': PROVIDER,
    'feature_flag.result.reason': reasonOf(answer),
  };
  if (answer.variant !== undefined) attributes['feature_flag.result.variant'] = answer.variant;
  if (answer.errorCode) {
    attributes['error.type'] = answer.errorCode.toLowerCase();
    if (answer.errorDetails) attributes['error.message'] = answer.errorDetails;
  }
  if (setId) attributes['feature_flag.set.id'] = setId;
  if (contextId) attributes['feature_flag.context.id'] = contextId;
  return attributes;
}

/** A /v1 read serves the flag's default (no context): reason `static`, the switch as the variant. */
function v1Attributes(flag: V1Flag, setId: string | undefined): Attributes {
  const attributes: Attributes = {
    'feature_flag.key': flag.slug ?? '',
    'feature_flag.provider.name': PROVIDER,
    'feature_flag.result.reason': 'static',
    'feature_flag.result.variant': flag.enabled ? 'on' : 'off',
  };
  if (setId) attributes['feature_flag.set.id'] = setId;
  return attributes;
}

/** The targeting key of an OFREP request's context, when it sent one. */
function contextIdOf(request: FastifyRequest): string | undefined {
  if (typeof request.body !== 'string' || request.body === '') return undefined;
  try {
    const key = (JSON.parse(request.body) as { context?: { targetingKey?: unknown } })?.context?.targetingKey;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

export function registerEvaluationEvents(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (route === undefined || !READ_ROUTES.has(route) || payload === null || payload === undefined) return payload;
    const span = request.opentelemetry?.().span;
    if (!span?.isRecording()) return payload;
    // Encoded answers are the ready ones; a compressed list is not read back (its flags are in the snapshot's plain form).
    if (reply.getHeader('content-encoding')) return payload;
    let body: unknown;
    try {
      body = JSON.parse(Buffer.isBuffer(payload) ? payload.toString('utf8') : String(payload));
    } catch {
      return payload;
    }
    const setId = typeof request.headers['x-environment-key'] === 'string' ? request.headers['x-environment-key'] : undefined;
    if (route.startsWith('/ofrep/')) {
      const contextId = contextIdOf(request);
      const answers = route.endsWith(':key') ? [body as OfrepAnswer] : ((body as { flags?: OfrepAnswer[] }).flags ?? []);
      const single = route.endsWith(':key') ? (request.params as { key?: string }).key : undefined;
      for (const answer of answers) span.addEvent(EVENT, ofrepAttributes(single && !answer.key ? { ...answer, key: single } : answer, setId, contextId));
    } else if (reply.statusCode === 200) {
      const flags = route.endsWith(':slug') ? [body as V1Flag] : ((body as { flags?: V1Flag[] }).flags ?? []);
      for (const flag of flags) span.addEvent(EVENT, v1Attributes(flag, setId));
    }
    return payload;
  });
}
