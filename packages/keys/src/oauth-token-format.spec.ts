import { generateOAuthSecret, generateSecret, isOAuthSecret, parseAccessToken, parseBearer } from './index';

describe('OAuth token format', () => {
  it('makes secrets of their own prefixes and 43 base64url characters', () => {
    expect(generateOAuthSecret('access')).toMatch(/^svc-oat-[A-Za-z0-9_-]{43}$/);
    expect(generateOAuthSecret('refresh')).toMatch(/^svc-ort-[A-Za-z0-9_-]{43}$/);
    expect(generateOAuthSecret('code')).toMatch(/^svc-oac-[A-Za-z0-9_-]{43}$/);
    expect(isOAuthSecret('refresh', generateOAuthSecret('access'))).toBe(false);
  });

  it('an access token is no key: every key route refuses it as malformed', () => {
    for (let i = 0; i < 200; i++) {
      const token = generateOAuthSecret('access');
      expect(parseBearer(`Bearer ${token}`)).toEqual({ ok: false, reason: 'malformed' });
      expect(parseAccessToken(`Bearer ${token}`)).toEqual({ ok: true, token });
    }
  });

  it('the connector URL refuses keys and anything else as malformed', () => {
    expect(parseAccessToken(undefined)).toEqual({ ok: false, reason: 'missing' });
    expect(parseAccessToken(`Bearer ${generateSecret('api')}`)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseAccessToken(`Bearer ${generateSecret('management')}`)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseAccessToken(`Bearer ${generateOAuthSecret('refresh')}`)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseAccessToken(`Bearer svc-oat-${'a'.repeat(42)}`)).toEqual({ ok: false, reason: 'malformed' });
    expect(parseAccessToken(`bearer ${generateOAuthSecret('access')}`).ok).toBe(true);
  });
});
