import { AddressList, clientAddress, parseCidr, parseTrustedProxies } from './client-address';

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', { address: '10.0.0.0', prefix: 8, family: 'ipv4' }],
    ['203.0.113.7', { address: '203.0.113.7', prefix: 32, family: 'ipv4' }],
    ['2001:db8::/32', { address: '2001:db8::', prefix: 32, family: 'ipv6' }],
    ['::1', { address: '::1', prefix: 128, family: 'ipv6' }],
    ['0.0.0.0/0', { address: '0.0.0.0', prefix: 0, family: 'ipv4' }],
  ])('reads %s', (text, expected) => {
    expect(parseCidr(text)).toEqual(expected);
  });

  it.each(['', '10.0.0.0/33', '2001:db8::/129', '10.0.0/8', '10.0.0.0/08', '10.0.0.0/', 'fe80::1%eth0', 'example.com', ' 10.0.0.1', '1.2.3.4/-1', 'x'.repeat(65)])(
    'refuses %j', (text) => {
      expect(parseCidr(text)).toBeNull();
    });
});

describe('AddressList', () => {
  const list = AddressList.parse(['10.0.0.0/8', '2001:db8::/32', '192.0.2.5']);

  it('matches IPv4, IPv6 and IPv4-mapped IPv6 addresses against their ranges', () => {
    expect(list.has('10.200.1.1')).toBe(true);
    expect(list.has('11.0.0.1')).toBe(false);
    expect(list.has('2001:db8:1::9')).toBe(true);
    expect(list.has('2001:db9::1')).toBe(false);
    expect(list.has('192.0.2.5')).toBe(true);
    expect(list.has('192.0.2.6')).toBe(false);
    expect(list.has('::ffff:10.1.2.3')).toBe(true);
    expect(list.has('not an address')).toBe(false);
  });

  it('throws on a bad entry, or skips it when lenient', () => {
    expect(() => AddressList.parse(['10.0.0.0/8', 'nope'])).toThrow(/not an IPv4 or IPv6 address or CIDR/);
    expect(AddressList.lenient(['nope', '10.0.0.0/8']).size).toBe(1);
  });
});

describe('clientAddress', () => {
  const none = parseTrustedProxies('');
  const proxies = parseTrustedProxies('10.0.0.0/8, fd00::/8');

  it('is the socket address without trusted proxies, whatever X-Forwarded-For says', () => {
    expect(clientAddress('198.51.100.9', '203.0.113.7', none)).toBe('198.51.100.9');
    expect(clientAddress('::ffff:198.51.100.9', undefined, none)).toBe('198.51.100.9');
  });

  it('is the socket address when the peer is not a trusted proxy', () => {
    expect(clientAddress('198.51.100.9', '203.0.113.7', proxies)).toBe('198.51.100.9');
  });

  it('is the nearest hop that is not a trusted proxy, walking from the right', () => {
    expect(clientAddress('10.0.0.2', '203.0.113.7', proxies)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.2', '1.1.1.1, 203.0.113.7, 10.9.9.9', proxies)).toBe('203.0.113.7');
    expect(clientAddress('fd00::2', ['2001:db8::5', 'fd00::9'], proxies)).toBe('2001:db8::5');
    expect(clientAddress('::ffff:10.0.0.2', '203.0.113.7:4711', proxies)).toBe('203.0.113.7');
    expect(clientAddress('10.0.0.2', '[2001:db8::5]:443', proxies)).toBe('2001:db8::5');
  });

  it('is the leftmost hop when every hop is trusted, and a hop that is no address as it is', () => {
    expect(clientAddress('10.0.0.2', '10.1.1.1, 10.2.2.2', proxies)).toBe('10.1.1.1');
    expect(clientAddress('10.0.0.2', 'unknown', proxies)).toBe('unknown');
  });
});
