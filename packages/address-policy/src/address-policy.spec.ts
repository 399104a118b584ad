import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { addressRefusal, classifyAddress, hostRefusal, REFUSAL } from './address-policy';
import { IPV6_GLOBAL_UNICAST, SPECIAL_RANGES } from './ranges';
import type { SpecialRange } from './ranges';

/** An independent reading of the ranges, in integers (the policy itself matches with Node's BlockList). */
const BITS = { ipv4: 32, ipv6: 128 } as const;

function toInt(address: string, family: 'ipv4' | 'ipv6'): bigint {
  if (family === 'ipv4') return address.split('.').reduce((sum, part) => (sum << 8n) + BigInt(part), 0n);
  const [head = '', tail = ''] = address.includes('::') ? address.split('::') : [address, ''];
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return groups.reduce((sum, group) => (sum << 16n) + BigInt(`0x${group}`), 0n);
}

function fromInt(value: bigint, family: 'ipv4' | 'ipv6'): string {
  if (family === 'ipv4') return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  return [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((value >> shift) & 0xffffn).toString(16)).join(':');
}

function bounds(range: Pick<SpecialRange, 'network' | 'prefix' | 'family'>): { first: bigint; last: bigint } {
  const size = 1n << BigInt(BITS[range.family] - range.prefix);
  const first = toInt(range.network, range.family);
  return { first, last: first + size - 1n };
}

/** The oracle: refused under `public` when in any listed range, or (IPv6) outside global unicast; mapped IPv6 as its IPv4. */
function expectedRefused(value: bigint, family: 'ipv4' | 'ipv6'): boolean {
  if (family === 'ipv6' && value >> 32n === 0xffffn) return expectedRefused(value & 0xffffffffn, 'ipv4');
  const inRange = SPECIAL_RANGES.some((range) => {
    if (range.family !== family) return false;
    const { first, last } = bounds(range);
    return value >= first && value <= last;
  });
  if (inRange) return true;
  if (family === 'ipv4') return false;
  const { first, last } = bounds({ ...IPV6_GLOBAL_UNICAST, family: 'ipv6' });
  return value < first || value > last;
}

describe('the address policy over the special-purpose ranges', () => {
  it.each(SPECIAL_RANGES.map((range) => [`${range.network}/${range.prefix}`, range] as const))('refuses the first and last address of %s, and not its public neighbours', (_name, range) => {
    const { first, last } = bounds(range);
    for (const value of [first, last]) {
      const address = fromInt(value, range.family);
      expect({ address, refused: addressRefusal(address, 'public') !== null }).toEqual({ address, refused: true });
      const lifted = range.group === 'loopback';
      expect({ address, refused: addressRefusal(address, 'public-and-loopback') !== null }).toEqual({ address, refused: !lifted });
      expect(addressRefusal(address, 'any')).toBeNull();
    }
    const space = 1n << BigInt(BITS[range.family]);
    for (const value of [first - 1n, last + 1n]) {
      if (value < 0n || value >= space) continue;
      const address = fromInt(value, range.family);
      expect({ address, refused: addressRefusal(address, 'public') !== null }).toEqual({ address, refused: expectedRefused(value, range.family) });
    }
  });

  it('refuses the IPv6 transition ranges: IPv4-compatible, 6to4, Teredo, NAT64 (well-known and local-use), whatever IPv4 they carry', () => {
    const cases: [string, string][] = [
      ['::8.8.8.8', 'IPv4-compatible'],
      ['::7f00:1', 'IPv4-compatible'],
      ['2002:808:808::1', '6to4'],
      ['2002:a00:1::1', '6to4'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
      ['64:ff9b::808:808', 'NAT64, 64:ff9b::/96'],
      ['64:ff9b::10.0.0.1', 'NAT64, 64:ff9b::/96'],
      ['64:ff9b:1::a00:1', 'local-use NAT64'],
      ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'local-use NAT64'],
      ['192.88.99.1', '6to4 relay anycast'],
    ];
    for (const [address, name] of cases) {
      for (const reach of ['public', 'public-and-loopback'] as const) {
        expect({ address, reach, refusal: addressRefusal(address, reach) }).toEqual({ address, reach, refusal: expect.stringContaining(name) });
      }
    }
  });

  it('judges an IPv4-mapped IPv6 address (::ffff:0:0/96, dotted or hex) as the IPv4 address it carries, and keeps public IPv4 public', () => {
    expect(addressRefusal('::ffff:127.0.0.1', 'public')).toBe(REFUSAL.loopback);
    expect(addressRefusal('::ffff:7f00:1', 'public')).toBe(REFUSAL.loopback);
    expect(addressRefusal('::ffff:7f00:1', 'public-and-loopback')).toBeNull();
    expect(addressRefusal('0:0:0:0:0:ffff:a9fe:a9fe', 'public-and-loopback')).toBe(REFUSAL.nonPublic);
    expect(addressRefusal('::ffff:10.1.2.3', 'public-and-loopback')).toBe(REFUSAL.nonPublic);
    expect(addressRefusal('::ffff:8.8.8.8', 'public')).toBeNull();
    // Node's BlockList matches IPv4 against an IPv6 rule as if mapped: no rule may turn all of IPv4 away.
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '192.169.0.1', '223.255.255.255']) expect(addressRefusal(address, 'public')).toBeNull();
  });

  it('refuses IPv6 outside global unicast (2000::/3) and allows public IPv6', () => {
    for (const address of ['4000::1', '8000::1', '1::1', 'e000::1']) expect(addressRefusal(address, 'public')).toBe(REFUSAL.nonPublic);
    for (const address of ['2606:4700:4700::1111', '2a00:1450:4001::200e', '2001:4860:4860::8888', '3ffe::1']) expect(addressRefusal(address, 'public')).toBeNull();
  });

  it('loopback is lifted by public-and-loopback only; private, link-local and reserved never; any lifts everything but refuses what is no address', () => {
    for (const address of ['127.0.0.1', '127.255.255.254', '::1']) {
      expect(addressRefusal(address, 'public')).toBe(REFUSAL.loopback);
      expect(addressRefusal(address, 'public-and-loopback')).toBeNull();
    }
    for (const address of ['10.0.0.1', '169.254.169.254', 'fd00::1', 'fe80::1', 'fe80::1%eth0', '::', '0.0.0.0', '255.255.255.255']) {
      expect(addressRefusal(address, 'public-and-loopback')).toBe(REFUSAL.nonPublic);
      expect(addressRefusal(address, 'any')).toBeNull();
    }
    for (const text of ['not-an-ip', '', '1.2.3', '::g', '010.0.0.1']) expect(addressRefusal(text, 'any')).toBe(REFUSAL.notAnAddress);
    expect(classifyAddress('8.8.8.8')).toEqual({ kind: 'public' });
  });

  it('agrees with the integer reading of the ranges on random IPv4 and IPv6 addresses (seeded)', () => {
    fc.assert(fc.property(fc.ipV4(), (address) => (addressRefusal(address, 'public') !== null) === expectedRefused(toInt(address, 'ipv4'), 'ipv4')), { seed: 45, numRuns: 5_000 });
    const ipv6 = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((groups) => groups.map((g) => g.toString(16)).join(':'));
    // Biased toward the ranges' neighbourhoods: half the addresses share a range's first two groups.
    const near = fc.tuple(fc.constantFrom(...SPECIAL_RANGES.filter((r) => r.family === 'ipv6')), fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 6, maxLength: 6 }))
      .map(([range, rest]) => [...fromInt(toInt(range.network, 'ipv6'), 'ipv6').split(':').slice(0, 2), ...rest.map((g) => g.toString(16))].join(':'));
    fc.assert(fc.property(fc.oneof(ipv6, near), (address) => (addressRefusal(address, 'public') !== null) === expectedRefused(toInt(address, 'ipv6'), 'ipv6')), { seed: 45, numRuns: 5_000 });
  });

  it('decides a URL\'s host before any lookup: address literals by the ranges, localhost names as loopback, other names at connect time', () => {
    expect(hostRefusal('[2002:a00:1::1]', 'public-and-loopback')).toContain('6to4');
    expect(hostRefusal('10.0.0.1', 'public')).toBe(REFUSAL.nonPublic);
    expect(hostRefusal('[::1]', 'public')).toBe(REFUSAL.loopback);
    expect(hostRefusal('localhost', 'public')).toBe(REFUSAL.loopback);
    expect(hostRefusal('api.LOCALHOST.', 'public')).toBe(REFUSAL.loopback);
    expect(hostRefusal('localhost', 'public-and-loopback')).toBeNull();
    expect(hostRefusal('hooks.example.com', 'public')).toBeNull();
    expect(hostRefusal('8.8.8.8', 'public')).toBeNull();
  });

  it('docs/webhooks.md names every refused range', () => {
    const text = readFileSync(join(__dirname, '../../../docs/webhooks.md'), 'utf8');
    const missing = SPECIAL_RANGES.map((range) => `${range.network}/${range.prefix}`).filter((cidr) => !text.includes(`\`${cidr}\``));
    expect(missing).toEqual([]);
  });
});
