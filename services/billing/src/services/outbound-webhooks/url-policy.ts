import { BlockList, isIP } from 'node:net';

/**
 * Where billing may send a webhook (docs/decisions/0028). By default only https URLs whose
 * every address is public. With WEBHOOK_ALLOW_HTTP_AND_LOOPBACK (the local stack and tests),
 * http and loopback addresses are allowed too; private, link-local and the other special
 * ranges stay refused. The URL is checked when an endpoint is saved (its scheme, and its host
 * when that is an address literal), and every delivery checks the addresses DNS answers at
 * connection time (deliver.ts), so a name that later resolves inward is refused too.
 */
export interface UrlPolicy {
  allowHttpAndLoopback: boolean;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Never a webhook's destination: private, link-local, shared, multicast, reserved and unspecified ranges. */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24],
  ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) FORBIDDEN.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64],
] as const) FORBIDDEN.addSubnet(network, prefix, 'ipv6');

/** Why an address is refused, or null when billing may connect to it. */
export function refusedAddress(address: string, policy: UrlPolicy): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
  const mapped = type === 'ipv6' ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) : null;
  if (mapped?.[1] !== undefined) return refusedAddress(mapped[1], policy);
  if (LOOPBACK.check(address, type)) return policy.allowHttpAndLoopback ? null : 'a loopback address';
  if (FORBIDDEN.check(address, type)) return 'a private, link-local or reserved address';
  return null;
}

/** Why a URL may not be an endpoint's, or null. `url` already passed the DTO's URL check. */
export function refusedUrl(url: string, policy: UrlPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute URL';
  }
  if (parsed.protocol !== 'https:' && !(policy.allowHttpAndLoopback && parsed.protocol === 'http:')) {
    return policy.allowHttpAndLoopback ? 'url must be an http(s) URL' : 'url must be an https URL';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'url must not contain credentials';
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (isIP(host) !== 0) {
    const refused = refusedAddress(host, policy);
    if (refused !== null) return `url must not name ${refused}`;
  } else if (!policy.allowHttpAndLoopback && (host === 'localhost' || host.endsWith('.localhost'))) {
    return 'url must not name a loopback address';
  }
  return null;
}
