import { refusedAddress, refusedUrl } from './url-policy';

const strict = { allowHttpAndLoopback: false };
const local = { allowHttpAndLoopback: true };

describe('the webhook URL policy', () => {
  it.each(['10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', 'fd00::1', 'fe80::1', '::', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '224.0.0.1'])(
    'refuses %s on every deployment', (address) => {
      expect(refusedAddress(address, strict)).not.toBeNull();
      expect(refusedAddress(address, local)).not.toBeNull();
    },
  );

  it.each(['::7f00:1', '::a00:1', '::808:808', '2002:7f00:1::1', '2002:808:808::1', '2001:0:4136:e378::1', '64:ff9b::808:808', '64:ff9b:1::a00:1'])(
    'refuses the IPv6 transition address %s (IPv4-compatible, 6to4, Teredo, NAT64) on every deployment', (address) => {
      expect(refusedAddress(address, strict)).not.toBeNull();
      expect(refusedAddress(address, local)).not.toBeNull();
      expect(refusedUrl(`https://[${address}]/in`, local)).not.toBeNull();
    },
  );

  it.each(['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1'])('refuses loopback %s unless the setting allows it', (address) => {
    expect(refusedAddress(address, strict)).toBe('a loopback address');
    expect(refusedAddress(address, local)).toBeNull();
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1', '192.169.0.1'])('allows public %s', (address) => {
    expect(refusedAddress(address, strict)).toBeNull();
  });

  it('allows https only, unless the setting allows http too', () => {
    expect(refusedUrl('https://hooks.example.com/in', strict)).toBeNull();
    expect(refusedUrl('http://hooks.example.com/in', strict)).toBe('url must be an https URL');
    expect(refusedUrl('http://hooks.example.com/in', local)).toBeNull();
    expect(refusedUrl('ftp://hooks.example.com/in', local)).toBe('url must be an http(s) URL');
  });

  it('refuses address literals and localhost names by the same rules, and credentials in the URL', () => {
    expect(refusedUrl('https://10.1.2.3/in', local)).toBe('url must not name a private, link-local or reserved address');
    expect(refusedUrl('https://[fe80::1]/in', local)).toBe('url must not name a private, link-local or reserved address');
    expect(refusedUrl('https://127.0.0.1/in', strict)).toBe('url must not name a loopback address');
    expect(refusedUrl('https://localhost/in', strict)).toBe('url must not name a loopback address');
    expect(refusedUrl('http://127.0.0.1:9999/in', local)).toBeNull();
    expect(refusedUrl('https://user:pw@hooks.example.com/in', strict)).toBe('url must not contain credentials');
  });
});
