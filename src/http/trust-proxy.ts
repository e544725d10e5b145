import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';

/** Decides whether the hop at `addr` (0 = the socket's peer) is a proxy whose X-Forwarded-For counts. */
export type TrustProxy = (addr: string, hop: number) => boolean;

/**
 * The trust function of FLAGPOST_TRUST_PROXY's list of proxy addresses and CIDR ranges (issue 8), or
 * undefined when no proxy is trusted. Fastify's request.ip and the flag read fast path use this same
 * function, so a client has the same address however its request is answered: the rightmost address
 * of X-Forwarded-For that was not added by a trusted proxy, never one the client chose.
 */
export function trustProxyOf(proxies: readonly string[]): TrustProxy | undefined {
  return proxies.length === 0 ? undefined : proxyaddr.compile([...proxies]);
}

/** The client address of a raw request under `trust` (the socket's peer when no proxy is trusted). */
export function clientAddress(req: IncomingMessage, trust: TrustProxy | undefined): string {
  if (!trust) return req.socket.remoteAddress ?? '';
  const chain = proxyaddr.all(req, trust);
  return chain[chain.length - 1] ?? '';
}
