import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import type { EvaluationContext, Hook, TrackingEventDetails } from '@openfeature/web-sdk';
import { EventQueue, type FlagpostOptions } from './event-queue.ts';
import { exposureHook, trackEvent } from './tracking.ts';

export type { FlagpostOptions } from './event-queue.ts';

/** Options of the web provider: Flagpost's, plus the maintained OFREP web provider's own (polling, cache). */
export type FlagpostWebOptions = FlagpostOptions & {
  pollInterval?: number;
  changeDetection?: 'sse' | 'polling' | 'none';
  cacheMode?: 'local-cache-first' | 'network-first' | 'disabled';
};

/**
 * Flagpost for `@openfeature/web-sdk`: flags evaluated in bulk by the maintained OFREP web provider (with
 * Flagpost's live updates), `track()` and the exposures of split flags sent to `POST /v1/track`; what is
 * queued is sent when the page is hidden, so a closing tab loses nothing it had reported.
 */
export class FlagpostWebProvider extends OFREPWebProvider {
  override readonly metadata = { name: 'Flagpost' };
  /** Reports exposures of flags served by a split (unless `exposures: false`). */
  override readonly hooks: Hook[];
  private readonly queue: EventQueue;
  private readonly warn: { warn(...args: unknown[]): void };
  private readonly onHidden = (): void => {
    if (typeof document === 'undefined' || document.visibilityState === 'hidden') void this.queue.flush(true);
  };

  constructor(options: FlagpostWebOptions) {
    super({
      baseUrl: options.baseUrl,
      headers: [
        ['x-project-key', options.projectKey],
        ['x-environment-key', options.environmentKey],
      ],
      ...(options.fetchImplementation ? { fetchImplementation: options.fetchImplementation } : {}),
      ...(options.pollInterval !== undefined ? { pollInterval: options.pollInterval } : {}),
      ...(options.changeDetection ? { changeDetection: options.changeDetection } : {}),
      ...(options.cacheMode ? { cacheMode: options.cacheMode } : {}),
    });
    this.queue = new EventQueue(options);
    this.warn = options.logger ?? console;
    this.hooks = options.exposures === false ? [] : [exposureHook(this.queue) as Hook];
  }

  /** Called by the SDK when the provider is set: evaluates the flags, then sends queued events on an interval. */
  override async initialize(context?: EvaluationContext, domain?: string): Promise<void> {
    this.queue.start();
    if (typeof addEventListener === 'function') {
      addEventListener('visibilitychange', this.onHidden);
      addEventListener('pagehide', this.onHidden);
    }
    await super.initialize(context, domain);
  }

  /** Called by `OpenFeature.close()`: stops the OFREP provider and sends everything still queued. */
  override async onClose(): Promise<void> {
    if (typeof removeEventListener === 'function') {
      removeEventListener('visibilitychange', this.onHidden);
      removeEventListener('pagehide', this.onHidden);
    }
    await super.onClose?.();
    await this.queue.close();
  }

  /** OpenFeature's tracking API: `OpenFeature.getClient().track('purchase', { value: 12.5 })`. */
  track(trackingEventName: string, context: EvaluationContext, trackingEventDetails: TrackingEventDetails): void {
    trackEvent(this.queue, this.warn, trackingEventName, context, trackingEventDetails);
  }

  /** Sends everything queued now. */
  flush(): Promise<void> {
    return this.queue.flush();
  }
}
