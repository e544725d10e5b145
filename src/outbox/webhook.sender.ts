import { signWebhook, type SendResult } from './outbox.ts';

export interface WebhookRequest {
  /** Stable across retries (the delivery id), so receivers can drop duplicates. */
  id: string;
  url: string;
  body: string;
  secret: string;
}

/** POSTs signed webhook bodies (contract D18) in the Standard Webhooks style. */
export class WebhookSender {
  constructor(
    private readonly timeoutMs: number,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async send(request: WebhookRequest): Promise<SendResult> {
    const timestamp = Math.floor(this.clock().getTime() / 1000);
    try {
      const response = await fetch(request.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Flagpost-Webhook/1',
          'webhook-id': request.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(request.secret, request.id, timestamp, request.body),
        },
        body: request.body,
        // A redirect is an answer, not a delivery; following it could send the body somewhere unexpected.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) return { ok: true, statusCode: response.status };
      return { ok: false, statusCode: response.status, error: `HTTP ${response.status}` };
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason =
        error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (cause?.code ?? cause?.message ?? String(error));
      return { ok: false, error: reason.slice(0, 500) };
    }
  }
}
