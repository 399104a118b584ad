import { isId, newRequestId } from '@svc/ids';
import { call, errorOf, INTERNAL_TOKEN, operatorHeaders, startHarness } from './billing-harness';
import type { Harness } from './billing-harness';

let h: Harness;
let accountId: string;

beforeAll(async () => {
  h = await startHarness('credits');
  const created = await call(`${h.billing.operatorUrl}/operator/accounts`, { method: 'POST', headers: operatorHeaders(), body: '{}' });
  accountId = created.body.account_id as string;
  const granted = await call(`${h.billing.operatorUrl}/operator/accounts/${accountId}/grants`, {
    method: 'POST',
    headers: operatorHeaders(),
    body: JSON.stringify({ amount_usd: 12.345678, reason: 'test credit' }),
  });
  expect(granted.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await h.close();
});

function gatewayHeaders(account: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'x-svc-internal-token': INTERNAL_TOKEN,
    'x-svc-account-id': account,
    'x-svc-key-id': extra['x-svc-key-kind'] === 'management' ? 'mkey_AAAAAAAAAAAAAAAAAAAAAAAA' : 'key_AAAAAAAAAAAAAAAAAAAAAAAA',
    'x-svc-key-kind': 'api',
    ...extra,
  };
}

describe('GET /v1/credits', () => {
  it('answers the durable balance from Postgres for either kind of key, reusing the gateway request id', async () => {
    for (const kind of ['api', 'management']) {
      const requestId = newRequestId();
      const response = await call(`${h.billing.publicUrl}/v1/credits`, {
        headers: gatewayHeaders(accountId, { 'x-svc-key-kind': kind, 'x-svc-request-id': requestId }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-svc-request-id')).toBe(requestId);
      expect(response.body).toEqual({
        balance_usd: 12.345678,
        reserved_usd: 0,
        total_purchased_usd: 0,
        total_spent_usd: 0,
        request_id: requestId,
      });
    }
  });

  it("keeps a gateway request id of the earlier form (no time), and replaces one that is not a request id", async () => {
    const earlier = 'req_nZQd3GZNGpexcvXOIQqthSSB';
    const kept = await call(`${h.billing.publicUrl}/v1/credits`, { headers: gatewayHeaders(accountId, { 'x-svc-request-id': earlier }) });
    expect(kept.headers.get('x-svc-request-id')).toBe(earlier);
    const malformed = `req_${'x'.repeat(40)}`;
    const replaced = await call(`${h.billing.publicUrl}/v1/credits`, { headers: gatewayHeaders(accountId, { 'x-svc-request-id': malformed }) });
    expect(replaced.status).toBe(200);
    expect(replaced.headers.get('x-svc-request-id')).not.toBe(malformed);
    expect(isId('request', replaced.headers.get('x-svc-request-id'))).toBe(true);
  });

  it('answers zeros for an account with no balance row', async () => {
    const response = await call(`${h.billing.publicUrl}/v1/credits`, { headers: gatewayHeaders('acct_BBBBBBBBBBBBBBBBBBBBBBBB') });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ balance_usd: 0, reserved_usd: 0, total_purchased_usd: 0, total_spent_usd: 0 });
  });

  it.each([
    ['no internal token', { 'x-svc-internal-token': '' }],
    ['a wrong internal token', { 'x-svc-internal-token': 'not-the-internal-token' }],
    ['no account id', { 'x-svc-account-id': '' }],
    ['an unknown key kind', { 'x-svc-key-kind': 'root' }],
  ])('rejects a request with %s as 401 invalid_api_key', async (_what, override) => {
    const headers = Object.fromEntries(Object.entries(gatewayHeaders(accountId, override)).filter(([, v]) => v !== ''));
    const response = await call(`${h.billing.publicUrl}/v1/credits`, { headers });
    expect(response.status).toBe(401);
    expect(errorOf(response).code).toBe('invalid_api_key');
    expect(response.body).not.toHaveProperty('balance_usd');
  });

  it('does not reuse a request id offered without the internal token', async () => {
    const offered = newRequestId();
    const response = await call(`${h.billing.publicUrl}/v1/credits`, { headers: { 'x-svc-request-id': offered } });
    expect(response.status).toBe(401);
    const id = response.headers.get('x-svc-request-id');
    expect(isId('request', id)).toBe(true);
    expect(id).not.toBe(offered);
    expect(errorOf(response).request_id).toBe(id);
  });
});

describe('routing on the public listener', () => {
  it('answers an unknown path with 404 JSON and a wrong method with 405', async () => {
    const unknown = await call(`${h.billing.publicUrl}/v1/nothing`, { headers: gatewayHeaders(accountId) });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).code).toBe('not_found');
    const wrong = await call(`${h.billing.publicUrl}/v1/credits`, { method: 'POST', headers: gatewayHeaders(accountId) });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('GET');
    expect(errorOf(wrong).request_id).toBe(wrong.headers.get('x-svc-request-id'));
  });

  it('serves healthz and readyz', async () => {
    const health = await call(`${h.billing.publicUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-svc-request-id')).toBe(health.body.request_id);
    const ready = await call(`${h.billing.publicUrl}/readyz`);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { postgres: true, redis: true } });
  });
});
