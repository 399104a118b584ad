import { generateSecret, hashSecret, kindOfSecret, labelOf, parseBearer } from './key-format';

describe('key format', () => {
  it('generates API secrets of svc- and 43 base64url characters, never readable as management', () => {
    for (let i = 0; i < 2000; i++) {
      const secret = generateSecret('api');
      expect(secret).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);
      expect(secret.startsWith('svc-mgmt-')).toBe(false);
      expect(kindOfSecret(secret)).toBe('api');
    }
  });

  it('generates management secrets of svc-mgmt- and 43 characters', () => {
    const secret = generateSecret('management');
    expect(secret).toMatch(/^svc-mgmt-[A-Za-z0-9_-]{43}$/);
    expect(kindOfSecret(secret)).toBe('management');
  });

  it('hashes with SHA-256 to lowercase hex', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('labels with the prefix, four characters and an ellipsis', () => {
    const api = 'svc-Ab3x' + 'a'.repeat(39);
    expect(labelOf(api)).toBe('svc-Ab3x…');
    expect(labelOf('svc-mgmt-Zq9P' + 'b'.repeat(39))).toBe('svc-mgmt-Zq9P…');
  });

  it.each([
    [undefined, 'missing'],
    ['', 'missing'],
    ['svc-' + 'a'.repeat(43), 'malformed'],
    ['Basic abc', 'malformed'],
    ['Bearer sk-' + 'a'.repeat(43), 'malformed'],
    ['Bearer svc-short', 'malformed'],
    ['Bearer  svc-' + 'a'.repeat(43), 'malformed'],
    ['Bearer svc-' + 'a'.repeat(44), 'malformed'],
  ])('rejects the header %p as %s', (header, reason) => {
    expect(parseBearer(header)).toEqual({ ok: false, reason });
  });

  it('reads the scheme name in any case, but not the secret', () => {
    const api = generateSecret('api');
    expect(parseBearer('bearer ' + api)).toEqual({ ok: true, secret: api, kind: 'api' });
    expect(parseBearer('BEARER ' + api)).toEqual({ ok: true, secret: api, kind: 'api' });
    expect(parseBearer('Bearer SVC-' + api.slice(4))).toEqual({ ok: false, reason: 'malformed' });
  });

  it('accepts a well-formed bearer of either kind', () => {
    const api = generateSecret('api');
    const mgmt = generateSecret('management');
    expect(parseBearer('Bearer ' + api)).toEqual({ ok: true, secret: api, kind: 'api' });
    expect(parseBearer('Bearer ' + mgmt)).toEqual({ ok: true, secret: mgmt, kind: 'management' });
  });
});
