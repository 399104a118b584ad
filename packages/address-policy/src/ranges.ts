/**
 * The address ranges a server-side fetch may never reach on its own, from IANA's IPv4 and
 * IPv6 Special-Purpose Address Registries (RFC 6890 and the RFCs each entry names) and the
 * IPv6 transition mechanisms, which carry an IPv4 address inside an IPv6 one and so could
 * route a request to a private IPv4 network through a relay or a translator.
 *
 * `group` says what a deployment may lift: `loopback` only where the policy's reach includes
 * loopback (a local stack's receivers); `non-public` and `transition` never, except with the
 * reach `any` (test stacks only). An IPv4-mapped IPv6 address (::ffff:0:0/96) is no entry: it
 * is judged as the IPv4 address it carries (address-policy.ts), and IPv6 outside global unicast
 * (2000::/3) is refused as a whole, so this list names why, not what alone is refused.
 */
export type RangeGroup = 'loopback' | 'non-public' | 'transition';

export interface SpecialRange {
  readonly network: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
  readonly group: RangeGroup;
  /** What the range is, in a few words (named in the refusal of a transition address). */
  readonly use: string;
}

const v4 = (network: string, prefix: number, group: RangeGroup, use: string): SpecialRange => ({ network, prefix, family: 'ipv4', group, use });
const v6 = (network: string, prefix: number, group: RangeGroup, use: string): SpecialRange => ({ network, prefix, family: 'ipv6', group, use });

/** In order: the first range an address falls in gives the reason of its refusal. */
export const SPECIAL_RANGES: readonly SpecialRange[] = [
  v4('127.0.0.0', 8, 'loopback', 'loopback'),
  v4('0.0.0.0', 8, 'non-public', '"this network"'),
  v4('10.0.0.0', 8, 'non-public', 'private use'),
  v4('100.64.0.0', 10, 'non-public', 'shared address space (carrier-grade NAT)'),
  v4('169.254.0.0', 16, 'non-public', 'link-local (cloud metadata services)'),
  v4('172.16.0.0', 12, 'non-public', 'private use'),
  v4('192.0.0.0', 24, 'non-public', 'IETF protocol assignments'),
  v4('192.0.2.0', 24, 'non-public', 'documentation (TEST-NET-1)'),
  v4('192.88.99.0', 24, 'transition', '6to4 relay anycast, 192.88.99.0/24'),
  v4('192.168.0.0', 16, 'non-public', 'private use'),
  v4('198.18.0.0', 15, 'non-public', 'benchmarking'),
  v4('198.51.100.0', 24, 'non-public', 'documentation (TEST-NET-2)'),
  v4('203.0.113.0', 24, 'non-public', 'documentation (TEST-NET-3)'),
  v4('224.0.0.0', 4, 'non-public', 'multicast'),
  v4('240.0.0.0', 4, 'non-public', 'reserved, and the limited broadcast address'),

  v6('::1', 128, 'loopback', 'loopback'),
  v6('::', 128, 'non-public', 'unspecified'),
  v6('::', 96, 'transition', 'IPv4-compatible, ::/96'),
  v6('64:ff9b::', 96, 'transition', 'NAT64, 64:ff9b::/96'),
  v6('64:ff9b:1::', 48, 'transition', 'local-use NAT64, 64:ff9b:1::/48'),
  v6('100::', 64, 'non-public', 'discard-only'),
  v6('2001::', 32, 'transition', 'Teredo, 2001::/32'),
  v6('2001::', 23, 'non-public', 'IETF protocol assignments'),
  v6('2001:db8::', 32, 'non-public', 'documentation'),
  v6('2002::', 16, 'transition', '6to4, 2002::/16'),
  v6('3fff::', 20, 'non-public', 'documentation'),
  v6('5f00::', 16, 'non-public', 'segment routing (SRv6) identifiers'),
  v6('fc00::', 7, 'non-public', 'unique local'),
  v6('fe80::', 10, 'non-public', 'link-local'),
  v6('fec0::', 10, 'non-public', 'site-local (deprecated)'),
  v6('ff00::', 8, 'non-public', 'multicast'),
];

/** IPv6 global unicast: every IPv6 address outside it is refused (IANA reserves the rest). */
export const IPV6_GLOBAL_UNICAST = { network: '2000::', prefix: 3 } as const;

/** IPv4-mapped IPv6 addresses, judged as the IPv4 address they carry. */
export const IPV4_MAPPED = '::ffff:0:0/96';
