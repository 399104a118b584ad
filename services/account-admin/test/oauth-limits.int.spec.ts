import { createHash, randomBytes } from 'node:crypto';
import { OAUTH_LIMITS, OAUTH_PATHS } from '@svc/contracts';
import { call, INTERNAL_TOKEN, startHarness } from './harness';
import type { Harness, JsonResponse } from './harness';

/**
 * The authorization server's anonymous writes are bounded (docs/decisions/0046): registrations
 * and authorization requests per client address per hour, each answering 429 `rate_limited`
 * with Retry-After over its limit, and a registration's body at most
 * OAUTH_LIMITS.registrationBodyBytes. Through the gateway's forwarding headers, on the real
 * PostgreSQL and Redis.
 */
describe('the OAuth endpoints bound anonymous writes per client address', () => {
  let h: Harness;
  const REDIRECT = 'https://app.example/callback';

  beforeAll(async () => {
    h = await startHarness('oauth_limits', { OAUTH_REGISTER_PER_ADDRESS_PER_HOUR: '3', OAUTH_AUTHORIZE_PER_ADDRESS_PER_HOUR: '4' });
  });

  afterAll(async () => {
    await h.close();
  });

  // Each test speaks for its own client address, as the gateway names it.
  const from = (address: string): Record<string, string> => ({ 'x-svc-internal-token': INTERNAL_TOKEN, 'x-svc-client-address': address });
  const register = (address: string, body: unknown = { client_name: 'Limited', redirect_uris: [REDIRECT] }): Promise<JsonResponse> =>
    call(h.baseUrl, 'POST', OAUTH_PATHS.register, { json: body, headers: from(address) });
  const count = async (table: 'oauth_clients' | 'oauth_requests'): Promise<number> => Number((await h.pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);

  async function authorize(address: string, clientId: string): Promise<Response> {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const url = new URL(h.baseUrl + OAUTH_PATHS.authorize);
    for (const [name, value] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 's' })) url.searchParams.set(name, value);
    return fetch(url, { redirect: 'manual', headers: from(address) });
  }

  it('registration: 201 up to the limit, then 429 rate_limited with Retry-After in OAuth\'s shape, storing nothing; another address is not affected', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await register('198.51.100.7')).status);
    expect(statuses).toEqual([201, 201, 201]);
    const before = await count('oauth_clients');
    const refused = await register('198.51.100.7');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate_limited', error_description: expect.stringContaining('too many client registrations from this address') });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(await count('oauth_clients')).toBe(before);
    expect((await register('198.51.100.8')).status).toBe(201);
  });

  it('registration: IPv6 addresses of one /64 share one count', async () => {
    for (let i = 1; i <= 3; i++) expect((await register(`2001:db8:7:1::${i}`)).status).toBe(201);
    expect((await register('2001:db8:7:1:ffff::9')).status).toBe(429);
    expect((await register('2001:db8:7:2::1')).status).toBe(201);
  });

  it('registration: a body over the bound is refused (413, OAuth\'s shape) and nothing is stored', async () => {
    const before = await count('oauth_clients');
    const padding = 'x'.repeat(OAUTH_LIMITS.registrationBodyBytes);
    const tooLarge = await register('198.51.100.20', { client_name: 'Padded', redirect_uris: [REDIRECT], software_statement: padding });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual({ error: 'invalid_client_metadata', error_description: `the registration body must be at most ${OAUTH_LIMITS.registrationBodyBytes} bytes` });
    expect(await count('oauth_clients')).toBe(before);
  });

  it('authorization requests: up to the limit, then the error page with 429 and Retry-After, no request stored; another address is not affected', async () => {
    const clientId = String((await register('198.51.100.30')).body.client_id);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await authorize('203.0.113.40', clientId)).status);
    expect(statuses).toEqual([302, 302, 302, 302]);
    const before = await count('oauth_requests');
    const refused = await authorize('203.0.113.40', clientId);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('location')).toBeNull();
    expect(refused.headers.get('content-type')).toContain('text/html');
    expect(await refused.text()).toContain('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await count('oauth_requests')).toBe(before);
    expect((await authorize('203.0.113.41', clientId)).status).toBe(302);
  });
});
