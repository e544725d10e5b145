import type { EvaluationContext, TrackingEventDetails } from '@openfeature/core';
import type { EventQueue } from './event-queue.ts';

/** What the exposure hook reads of an evaluation; both SDKs' `EvaluationDetails` have this shape. */
interface EvaluatedFlag {
  flagKey: string;
  variant?: string;
  reason?: string;
}

/**
 * The hook that reports exposures: an evaluation served by a split (reason `SPLIT`) to a context with a
 * targeting key is an exposure of that user to that variant. Other answers (a rule's fixed variant, the
 * default, a disabled flag, an error) put nobody into an experiment, so they are not reported.
 */
export function exposureHook(queue: EventQueue) {
  return {
    after(hookContext: { readonly context: Readonly<EvaluationContext> }, details: EvaluatedFlag): void {
      const targetingKey = hookContext.context.targetingKey;
      if (details.reason !== 'SPLIT' || !details.variant || typeof targetingKey !== 'string' || targetingKey === '') return;
      queue.exposure(details.flagKey, details.variant, targetingKey);
    },
  };
}

/**
 * OpenFeature's `track()`: the event is sent with the context's targeting key (events without one cannot be
 * joined to an exposure and are dropped with a warning); `value` is the metric's value, every other detail
 * travels as an attribute.
 */
export function trackEvent(
  queue: EventQueue,
  logger: { warn(...args: unknown[]): void },
  name: string,
  context: EvaluationContext,
  details: TrackingEventDetails | undefined,
): void {
  const targetingKey = context.targetingKey;
  if (typeof targetingKey !== 'string' || targetingKey === '') {
    logger.warn('Flagpost: track("%s") without a targetingKey in the context was dropped', name);
    return;
  }
  const { value, ...attributes } = details ?? {};
  queue.track(name, targetingKey, typeof value === 'number' ? value : undefined, attributes);
}
