/**
 * Exposures and tracked events on their way to Flagpost's `POST /v1/track`: queued in memory, sent in
 * batches when a batch is full, on an interval and when the provider closes.
 */

/** Where and as whom events are sent: the flag interface's client credentials. */
export interface FlagpostOptions {
  /** Flagpost's public URL, e.g. `https://flags.example.com` (OFREP and `/v1/track` live under it). */
  baseUrl: string;
  /** The project's key (`x-project-key`). */
  projectKey: string;
  /** The environment's key (`x-environment-key`). */
  environmentKey: string;
  /** How often queued events are sent, in milliseconds. Default 2,000. */
  flushIntervalMs?: number;
  /** Events per request, at most 1,000 (the server's limit). Default 100. */
  maxBatchSize?: number;
  /** Report exposures of flags served by a split (default true). */
  exposures?: boolean;
  /** A `fetch` to use instead of the global one. */
  fetchImplementation?: typeof fetch;
  /** Where the provider reports events it had to drop; default `console`. */
  logger?: { warn(...args: unknown[]): void };
}

export interface ExposureEvent {
  kind: 'exposure';
  flagKey: string;
  variant: string;
  targetingKey: string;
  timestamp: string;
}

export interface TrackEvent {
  kind: 'track';
  name: string;
  targetingKey: string;
  value?: number;
  timestamp: string;
  attributes?: Record<string, unknown>;
}

export type FlagpostEvent = ExposureEvent | TrackEvent;

/** The server's limit of events per request. */
const SERVER_BATCH_LIMIT = 1000;
/** Events kept while Flagpost cannot be reached; the oldest are dropped past it. */
const MAX_PENDING = 10_000;
/** Targeting key and flag pairs remembered for deduplication; the oldest are forgotten past it. */
const MAX_REMEMBERED_EXPOSURES = 50_000;

export class EventQueue {
  private pending: FlagpostEvent[] = [];
  /** `targetingKey \0 flagKey` to the variant last reported, in insertion order (oldest first). */
  private readonly reported = new Map<string, string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly logger: { warn(...args: unknown[]): void };

  constructor(options: FlagpostOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/v1/track`;
    this.headers = {
      'content-type': 'application/json',
      'x-project-key': options.projectKey,
      'x-environment-key': options.environmentKey,
    };
    this.batchSize = Math.max(1, Math.min(options.maxBatchSize ?? 100, SERVER_BATCH_LIMIT));
    this.intervalMs = options.flushIntervalMs ?? 2000;
    this.fetchImpl = options.fetchImplementation ?? ((...args) => fetch(...args));
    this.logger = options.logger ?? console;
  }

  /** Queues an exposure unless this targeting key was already reported in this variant of the flag. */
  exposure(flagKey: string, variant: string, targetingKey: string): void {
    const key = `${targetingKey}\u0000${flagKey}`;
    if (this.reported.get(key) === variant) return;
    this.reported.delete(key);
    this.reported.set(key, variant);
    if (this.reported.size > MAX_REMEMBERED_EXPOSURES) {
      const oldest = this.reported.keys().next().value;
      if (oldest !== undefined) this.reported.delete(oldest);
    }
    this.enqueue({ kind: 'exposure', flagKey, variant, targetingKey, timestamp: new Date().toISOString() });
  }

  /** Queues a tracked event. */
  track(name: string, targetingKey: string, value: number | undefined, attributes: Record<string, unknown> | undefined): void {
    const event: TrackEvent = { kind: 'track', name, targetingKey, timestamp: new Date().toISOString() };
    if (value !== undefined) event.value = value;
    if (attributes && Object.keys(attributes).length > 0) event.attributes = attributes;
    this.enqueue(event);
  }

  /** Starts the interval that sends what is queued; the timer never keeps a Node.js process alive. */
  start(): void {
    if (this.timer || this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Stops the interval and sends everything queued. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Sends everything queued, one batch after another; resolves when the last request has ended. */
  flush(keepalive = false): Promise<void> {
    this.sending = this.sending.then(() => this.sendAll(keepalive));
    return this.sending;
  }

  private enqueue(event: FlagpostEvent): void {
    this.pending.push(event);
    if (this.pending.length > MAX_PENDING) {
      this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.logger.warn('Flagpost: more than %d events waiting to be sent; the oldest were dropped', MAX_PENDING);
    }
    if (this.pending.length >= this.batchSize) void this.flush();
  }

  private async sendAll(keepalive: boolean): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.batchSize);
      const outcome = await this.send(batch, keepalive);
      if (outcome === 'retry') {
        // Flagpost is unreachable or busy: keep the batch at the front for the next flush.
        this.pending.unshift(...batch);
        return;
      }
    }
  }

  private async send(events: FlagpostEvent[], keepalive: boolean): Promise<'sent' | 'dropped' | 'retry'> {
    try {
      const response = await this.fetchImpl(this.url, { method: 'POST', headers: this.headers, body: JSON.stringify({ events }), keepalive });
      if (response.ok) return 'sent';
      if (response.status === 429 || response.status >= 500) return 'retry';
      // The server refused the batch (bad credentials or a bad event): sending it again would fail again.
      const body = await response.text().catch(() => '');
      this.logger.warn('Flagpost refused %d events (%d): %s', events.length, response.status, body);
      return 'dropped';
    } catch (error) {
      this.logger.warn('Flagpost could not be reached to send %d events: %s', events.length, (error as Error).message);
      return 'retry';
    }
  }
}
