import { isIPv4, isIPv6 } from 'node:net';

// The one definition of "the same client" for every per-client count: the rate limiter, the admin
// lockout and sign-in throttles, the OFREP event-stream cap and the upload cap.

/**
 * The counter key of a client address: IPv4 as it is, an IPv4-mapped IPv6 address as its IPv4, any other
 * IPv6 address as its /64 (one host usually owns a whole /64, so counting per address would let it pick
 * a fresh one for every request).
 */
export function clientKey(ip: string): string {
  const address = ip.replace(/%.*$/, '');
  if (isIPv4(address) || !isIPv6(address)) return address;
  const groups = expandIPv6(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` and a trailing dotted IPv4 expanded). */
function expandIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => parseInt(g, 16));
}
