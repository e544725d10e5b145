import { BlockList, isIP } from 'node:net';

/**
 * Which webhook targets deliveries may reach (FLAGPOST_WEBHOOK_TARGETS, docs/adr/0012-webhook-targets.md):
 * `public` only addresses on the internet; `private` also loopback and private networks (internal
 * services), never link-local, where cloud metadata services live; `any` everything.
 */
export type WebhookTargetPolicy = 'public' | 'private' | 'any';

/** Addresses that are never a public service: loopback, private, shared, reserved, multicast. */
const INTERNAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv6');
}

/** Link-local: where 169.254.169.254 and fd00:ec2::254 style metadata services answer. */
const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');
LINK_LOCAL.addAddress('fd00:ec2::254', 'ipv6');

/** Why `address` may not be reached under `policy`, or undefined when it may. */
export function refusedTarget(address: string, policy: WebhookTargetPolicy): string | undefined {
  if (policy === 'any') return undefined;
  let ip = address;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const family = isIP(ip);
  if (family === 0) return `${address} is not an IP address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (LINK_LOCAL.check(ip, type)) return `${address} is a link-local address`;
  if (policy === 'public' && INTERNAL.check(ip, type)) return `${address} is not a public address`;
  return undefined;
}

/**
 * The policy applied to a URL before any delivery (issue 22): a form's webhook whose host is an IP
 * literal or `localhost` that the policy refuses would only be retried until it fails, so the form
 * service refuses the setting upfront. A host name is judged at delivery time, when it resolves.
 */
export class WebhookTargetRule {
  constructor(readonly policy: WebhookTargetPolicy) {}

  /** Why deliveries to `url` can never be made under the policy, or undefined when they may be. */
  refusal(url: string): string | undefined {
    if (this.policy === 'any') return undefined;
    let host: string;
    try {
      host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    } catch {
      return undefined;
    }
    const address = host === 'localhost' || host.endsWith('.localhost') ? '127.0.0.1' : host;
    if (isIP(address) === 0) return undefined;
    const why = refusedTarget(address, this.policy);
    return why && `points at ${host}, which deliveries never reach under FLAGPOST_WEBHOOK_TARGETS=${this.policy}`;
  }
}
