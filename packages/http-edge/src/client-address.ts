import { BlockList, isIP } from 'node:net';

/**
 * Client addresses behind proxies (docs/operations.md, "Client addresses and
 * TRUSTED_PROXIES"), and the address lists of key fences. One function, clientAddress, is
 * what the gateway, the sign-in limits, the key fences and the audit log call "the client's
 * address". CIDR matching is Node's own net.BlockList (IPv4, IPv6, and IPv4-mapped IPv6
 * addresses against IPv4 ranges).
 */

export type AddressFamily = 'ipv4' | 'ipv6';

/** A parsed CIDR: a bare address is a single host (/32 or /128). */
export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: AddressFamily;
}

const MAX_CIDR_TEXT = 64;

function familyOf(address: string): AddressFamily | null {
  // A zone id (fe80::1%eth0) names an interface of one host; it is never a client's address here.
  if (address.includes('%')) return null;
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
}

/** `a.b.c.d/n`, `x:y::z/n` or a bare address; null when it is none of these. */
export function parseCidr(text: unknown): Cidr | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_CIDR_TEXT) return null;
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const family = familyOf(address);
  if (family === null) return null;
  const max = family === 'ipv4' ? 32 : 128;
  if (slash < 0) return { address, prefix: max, family };
  const prefixText = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix > max ? null : { address, prefix, family };
}

/** An IPv4 address written as IPv4-mapped IPv6 (`::ffff:10.0.0.1`, what a dual-stack socket shows) as plain IPv4. */
export function normalizeAddress(address: string): string {
  if (address.length > 7 && address.charCodeAt(0) === 58 /* : */ && address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4) {
    return address.slice(7);
  }
  return address;
}

/** A set of CIDRs, matched by net.BlockList. */
export class AddressList {
  readonly size: number;
  private readonly list = new BlockList();

  private constructor(cidrs: readonly Cidr[]) {
    for (const cidr of cidrs) this.list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    this.size = cidrs.length;
  }

  /** Throws on an entry that is no CIDR (configuration: TRUSTED_PROXIES). */
  static parse(entries: readonly string[]): AddressList {
    const cidrs = entries.map((entry) => {
      const cidr = parseCidr(entry.trim());
      if (cidr === null) throw new Error(`not an IPv4 or IPv6 address or CIDR: ${JSON.stringify(entry.slice(0, MAX_CIDR_TEXT))}`);
      return cidr;
    });
    return new AddressList(cidrs);
  }

  /** Skips entries that are no CIDR (they match nothing): for stored fences, validated when written. */
  static lenient(entries: readonly string[]): AddressList {
    const cidrs: Cidr[] = [];
    for (const entry of entries) {
      const cidr = parseCidr(entry);
      if (cidr !== null) cidrs.push(cidr);
    }
    return new AddressList(cidrs);
  }

  /** Whether `address` falls in one of the CIDRs; false for anything that is not an address. */
  has(address: string): boolean {
    if (this.size === 0) return false;
    const family = familyOf(address);
    return family !== null && this.list.check(address, family);
  }
}

/** Parses TRUSTED_PROXIES: comma-separated CIDRs, empty for none. Throws on a bad entry. */
export function parseTrustedProxies(text: string | undefined): AddressList {
  const entries = (text ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  return AddressList.parse(entries);
}

/** A hop of X-Forwarded-For as an address: trimmed, a port (`1.2.3.4:80`, `[::1]:80`) dropped. */
function hopAddress(hop: string): string {
  const text = hop.trim();
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    return end > 0 ? text.slice(1, end) : text;
  }
  const colon = text.indexOf(':');
  if (colon > 0 && colon === text.lastIndexOf(':') && isIP(text.slice(0, colon)) === 4) return text.slice(0, colon);
  return text;
}

/**
 * The client's address: the socket's, unless the socket's peer is a trusted proxy; then the
 * nearest X-Forwarded-For hop (walking from the right, the one the peer appended) that is
 * not a trusted proxy. When every hop is trusted, the leftmost. A hop that is no address is
 * taken as it is (it matches no fence). Without trusted proxies, X-Forwarded-For is ignored.
 * IPv4-mapped IPv6 addresses come back as IPv4.
 */
export function clientAddress(socketAddress: string, forwardedFor: string | readonly string[] | undefined, trusted: AddressList): string {
  const socket = normalizeAddress(socketAddress);
  if (trusted.size === 0 || forwardedFor === undefined || !trusted.has(socket)) return socket;
  const hops = (typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',')).split(',');
  let current = socket;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i] ?? '');
    if (hop === '') continue;
    current = normalizeAddress(hop);
    if (familyOf(current) === null) return current.slice(0, MAX_CIDR_TEXT);
    if (!trusted.has(current)) return current;
  }
  return current;
}

/** clientAddress of a Fastify (or Node) request: its socket's peer and its X-Forwarded-For. */
export function requestClientAddress(request: { ip: string; headers: Record<string, string | string[] | undefined> }, trusted: AddressList): string {
  return clientAddress(request.ip, request.headers['x-forwarded-for'], trusted);
}
