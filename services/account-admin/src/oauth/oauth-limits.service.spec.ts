import { limitSubject } from './oauth-limits.service';

/** What one client address counts as in the OAuth endpoints' per-address limits. */
describe('limitSubject', () => {
  it('counts an IPv4 address as itself, also when IPv4-mapped', () => {
    expect(limitSubject('203.0.113.9')).toBe('203.0.113.9');
    expect(limitSubject('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(limitSubject('::ffff:cb00:7109')).toBe('203.0.113.9');
  });

  it('counts an IPv6 address for its /64, however it is written', () => {
    const subject = '2001:db8:7:1::/64';
    for (const address of ['2001:db8:7:1::1', '2001:0db8:0007:0001:ffff:ffff:ffff:ffff', '2001:db8:7:1:0:0:0:9', '2001:db8:7:1::9%eth0', '2001:db8:7:1::1.2.3.4']) {
      expect({ address, subject: limitSubject(address) }).toEqual({ address, subject });
    }
    expect(limitSubject('2001:db8:7:2::1')).toBe('2001:db8:7:2::/64');
    expect(limitSubject('::1')).toBe('0:0:0:0::/64');
    expect(limitSubject('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('passes anything else through (the edge resolved it; it still counts as one subject)', () => {
    expect(limitSubject('unknown')).toBe('unknown');
  });
});
