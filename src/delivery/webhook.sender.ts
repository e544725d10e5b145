import type { Clock } from '../clock.ts';
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { type SendResult, signWebhook } from './delivery.ts';
import { refusedTarget, type WebhookTargetPolicy } from './webhook-target.ts';

export interface WebhookRequest {
  /** Stable across retries (the delivery id), so receivers can drop duplicates. */
  id: string;
  url: string;
  body: string;
  /** Signs the request (Standard Webhooks headers); null for chat services, which verify nothing. */
  secret: string | null;
}

/** dns.lookup's shape: tests pass a stub so that no name is ever resolved on the network. */
export type Lookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface WebhookSenderOptions {
  timeoutMs: number;
  policy: WebhookTargetPolicy;
  clock: Clock;
  lookup?: Lookup;
}

const REFUSED = 'EWEBHOOKTARGET';

/**
 * POSTs signed webhook bodies (contract D18) in the Standard Webhooks style. The target's addresses are
 * checked against the policy when the connection is made, on the very addresses it connects to, so a
 * name that resolves elsewhere later (DNS rebinding) gains nothing, and a refused target is never
 * contacted (the delivery history cannot be used to scan ports).
 */
export class WebhookSender {
  private readonly lookup: Lookup;

  constructor(private readonly options: WebhookSenderOptions) {
    this.lookup = options.lookup ?? (dns.lookup as unknown as Lookup);
  }

  async send(request: WebhookRequest): Promise<SendResult> {
    const timestamp = Math.floor(this.options.clock().getTime() / 1000);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return { ok: false, error: 'the webhook URL is not valid' };
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const refused = refusedTarget(host, this.options.policy);
      if (refused) return { ok: false, error: `target refused: ${refused} (FLAGPOST_WEBHOOK_TARGETS=${this.options.policy})` };
    }
    const body = Buffer.from(request.body);
    return new Promise<SendResult>((resolve) => {
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(
        url,
        {
          method: 'POST',
          agent: false,
          lookup: this.guardedLookup() as never,
          signal: AbortSignal.timeout(this.options.timeoutMs),
          headers: {
            'content-type': 'application/json',
            'content-length': String(body.length),
            'user-agent': 'Flagpost-Webhook/1',
            ...(request.secret === null
              ? {}
              : {
                  'webhook-id': request.id,
                  'webhook-timestamp': String(timestamp),
                  'webhook-signature': signWebhook(request.secret, request.id, timestamp, request.body),
                }),
          },
        },
        (response) => {
          // The answer's body is not needed; a redirect is an answer, not a delivery, and is not followed.
          response.resume();
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ ok: true, statusCode: status });
          else resolve({ ok: false, statusCode: status, error: `HTTP ${status}` });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.name === 'AbortError' || error.code === 'ABORT_ERR') resolve({ ok: false, error: `no answer within ${this.options.timeoutMs} ms` });
        else if (error.code === REFUSED) resolve({ ok: false, error: error.message });
        else resolve({ ok: false, error: (error.code ?? error.message).slice(0, 500) });
      });
      req.end(body);
    });
  }

  /** A lookup that refuses a name when any of its addresses is outside the policy. */
  private guardedLookup() {
    return (hostname: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
      this.lookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error);
        const refused = addresses.map((a) => refusedTarget(a.address, this.options.policy)).find((reason) => reason !== undefined);
        if (refused) {
          return callback(
            Object.assign(new Error(`target refused: ${hostname}: ${refused} (FLAGPOST_WEBHOOK_TARGETS=${this.options.policy})`), { code: REFUSED }),
          );
        }
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      });
    };
  }
}
