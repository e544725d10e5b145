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
  // IPv4-compatible (deprecated), :: and ::1 among them
  ['::', 96],
  ['64:ff9b::', 96],
  // 6to4 and Teredo: tunnels to an IPv4 address written into the IPv6 one (issue 29)
  ['2002::', 16],
  ['2001::', 32],
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
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const groups = family === 6 ? ipv6Groups(address) : undefined;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1, also written ::ffff:a00:1) is the IPv4 address.
  const ip = groups && groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff ? ipv4Of(groups[6]!, groups[7]!) : address;
  const type = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
  if (LINK_LOCAL.check(ip, type)) return `${address} is a link-local address`;
  // An IPv4 address tunnelled in IPv6 (IPv4-compatible, 6to4, Teredo) is judged as that address too.
  for (const embedded of groups ? embeddedIpv4(groups) : []) {
    if (LINK_LOCAL.check(embedded, 'ipv4')) return `${address} is a link-local address`;
  }
  if (policy === 'public' && INTERNAL.check(ip, type)) return `${address} is not a public address`;
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (isIP(address) === 6), a dotted IPv4 tail included. */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}

const ipv4Of = (high: number, low: number): string => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 addresses an IPv4-compatible (::/96), 6to4 (2002::/16) or Teredo (2001::/32) address leads to. */
function embeddedIpv4(groups: number[]): string[] {
  if (groups.slice(0, 6).every((g) => g === 0)) return [ipv4Of(groups[6]!, groups[7]!)];
  if (groups[0] === 0x2002) return [ipv4Of(groups[1]!, groups[2]!)];
  // Teredo: the server's address, and the client's with every bit inverted.
  if (groups[0] === 0x2001 && groups[1] === 0) return [ipv4Of(groups[2]!, groups[3]!), ipv4Of(groups[6]! ^ 0xffff, groups[7]! ^ 0xffff)];
  return [];
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
