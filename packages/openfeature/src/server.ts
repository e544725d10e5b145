import { OFREPProvider } from '@openfeature/ofrep-provider';
import type { EvaluationContext, Hook, TrackingEventDetails } from '@openfeature/server-sdk';
import { EventQueue, type FlagpostOptions } from './event-queue.ts';
import { exposureHook, trackEvent } from './tracking.ts';

export type { FlagpostOptions } from './event-queue.ts';

/**
 * Flagpost for `@openfeature/server-sdk`: flags evaluated by the maintained OFREP provider, `track()` and
 * the exposures of split flags sent to Flagpost's experiments (`POST /v1/track`).
 *
 * ```ts
 * await OpenFeature.setProviderAndWait(new FlagpostProvider({ baseUrl, projectKey, environmentKey }));
 * ```
 */
export class FlagpostProvider extends OFREPProvider {
  override readonly metadata = { name: 'Flagpost' };
  /** Reports exposures of flags served by a split (unless `exposures: false`). */
  readonly hooks: Hook[];
  private readonly queue: EventQueue;
  private readonly warn: { warn(...args: unknown[]): void };

  constructor(options: FlagpostOptions) {
    super({
      baseUrl: options.baseUrl,
      headers: [
        ['x-project-key', options.projectKey],
        ['x-environment-key', options.environmentKey],
      ],
      ...(options.fetchImplementation ? { fetchImplementation: options.fetchImplementation } : {}),
    });
    this.queue = new EventQueue(options);
    this.warn = options.logger ?? console;
    this.hooks = options.exposures === false ? [] : [exposureHook(this.queue) as Hook];
  }

  /** Called by the SDK when the provider is set: starts sending queued events on an interval. */
  async initialize(): Promise<void> {
    this.queue.start();
  }

  /** Called by `OpenFeature.close()`: sends everything still queued. */
  async onClose(): Promise<void> {
    await this.queue.close();
  }

  /** OpenFeature's tracking API: `client.track('purchase', context, { value: 12.5 })`. */
  track(trackingEventName: string, context: EvaluationContext, trackingEventDetails: TrackingEventDetails): void {
    trackEvent(this.queue, this.warn, trackingEventName, context, trackingEventDetails);
  }

  /** Sends everything queued now (tests and short scripts; `OpenFeature.close()` does it too). */
  flush(): Promise<void> {
    return this.queue.flush();
  }
}
