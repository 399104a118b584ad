import { BlockList, isIP } from 'node:net';
import { IPV4_MAPPED, IPV6_GLOBAL_UNICAST, SPECIAL_RANGES } from './ranges';
import type { RangeGroup, SpecialRange } from './ranges';

/**
 * How far a server-side fetch may reach:
 * - `public`: public addresses only (every production fetcher);
 * - `public-and-loopback`: loopback too (a local stack whose receivers run on the host);
 * - `any`: every address (test stacks only; nothing is refused).
 */
export type AddressReach = 'public' | 'public-and-loopback' | 'any';

/** Why an address is refused, in words that name no secret (shown to owners and clients). */
export const REFUSAL = {
  notAnAddress: 'not an IP address',
  loopback: 'a loopback address',
  nonPublic: 'a private, link-local or reserved address',
} as const;

interface CompiledRange {
  readonly range: SpecialRange;
  readonly list: BlockList;
}

const COMPILED: readonly CompiledRange[] = SPECIAL_RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { range, list };
});

const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet(IPV6_GLOBAL_UNICAST.network, IPV6_GLOBAL_UNICAST.prefix, 'ipv6');

// Only IPv6 strings are checked against it: Node's BlockList also matches an IPv4 address
// against an IPv6 rule as if mapped, which is why the mapped range is no refusal entry.
const MAPPED = new BlockList();
{
  const [network, prefix] = IPV4_MAPPED.split('/') as [string, string];
  MAPPED.addSubnet(network, Number(prefix), 'ipv6');
}

/** The class of an address: public, or the group and range that make it special. */
export type AddressClass =
  | { kind: 'public' }
  | { kind: 'special'; group: RangeGroup; range: SpecialRange | null }
  | { kind: 'invalid' };

/** The IPv4 address an IPv4-mapped IPv6 address carries (`::ffff:a.b.c.d` or `::ffff:xxxx:yyyy`). */
function mappedIpv4(address: string): string | null {
  if (!MAPPED.check(address, 'ipv6')) return null;
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (hex === null) return null;
  const high = Number.parseInt(hex[1] ?? '0', 16);
  const low = Number.parseInt(hex[2] ?? '0', 16);
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** Classifies an address (IPv6 zone ids are ignored: a zone only says which link). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  const family = isIP(bare);
  if (family === 0) return { kind: 'invalid' };
  if (family === 6) {
    const ipv4 = mappedIpv4(bare);
    if (ipv4 !== null) return classifyAddress(ipv4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { range, list } of COMPILED) {
    if (range.family === type && list.check(bare, type)) return { kind: 'special', group: range.group, range };
  }
  if (type === 'ipv6' && !GLOBAL_UNICAST.check(bare, 'ipv6')) return { kind: 'special', group: 'non-public', range: null };
  return { kind: 'public' };
}

/** Why `address` may not be connected to under `reach`, or null when it may. */
export function addressRefusal(address: string, reach: AddressReach): string | null {
  const verdict = classifyAddress(address);
  switch (verdict.kind) {
    case 'invalid':
      return REFUSAL.notAnAddress;
    case 'public':
      return null;
    case 'special':
      if (reach === 'any') return null;
      switch (verdict.group) {
        case 'loopback':
          return reach === 'public-and-loopback' ? null : REFUSAL.loopback;
        case 'transition':
          return `an IPv6 transition address (${verdict.range?.use ?? 'transition'})`;
        case 'non-public':
          return REFUSAL.nonPublic;
      }
  }
}

/**
 * Why a URL's host may not be fetched, decided before any lookup, or null: an address literal
 * (never looked up, so checked here) by `addressRefusal`, and `localhost` names as loopback.
 * Any other name is checked when the socket connects (`guardedLookup`).
 */
export function hostRefusal(hostname: string, reach: AddressReach): string | null {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(host.includes('%') ? host.slice(0, host.indexOf('%')) : host) !== 0) return addressRefusal(host, reach);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (reach === 'public' && (name === 'localhost' || name.endsWith('.localhost'))) return REFUSAL.loopback;
  return null;
}
