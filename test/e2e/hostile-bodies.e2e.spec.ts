import { bearer, call, newAccount, newApiKey, startStack } from '@svc/test-kit';
import type { JsonResponse, Stack } from '@svc/test-kit';
import { FakeStripe } from '../../tools/fake-stripe/src';

/**
 * The inputs issue 29 found reaching a 500 (or accepted when they must be refused), each
 * sent through the gateway to the service that owns the route: bodies nested 5,000 levels
 * deep, dates outside years 0001-9999, and the keys `__proto__`, `constructor` and
 * `prototype`. Every one must be 400 invalid_request in the platform's shape.
 */
function nestedObjects(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
function arrayInField(field: string, depth: number): string {
  return `{"${field}":${'['.repeat(depth)}1${']'.repeat(depth)}}`;
}

function expectInvalid(response: JsonResponse, mentions?: RegExp): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
  expect(response.body.error.request_id).toBe(response.headers.get('x-svc-request-id'));
  if (mentions !== undefined) expect(response.body.error.message).toMatch(mentions);
}

describe('hostile bodies and dates found by issue 29 (every service refuses them with 400)', () => {
  let stack: Stack;
  let stripe: FakeStripe;
  let gw: string;
  let managementKey: string;
  let apiKey: string;
  let keyId: string;
  let session: Record<string, string>;

  beforeAll(async () => {
    stripe = await FakeStripe.start({ secretKey: 'sk_test_hostile', webhookSecret: 'whsec_hostile' });
    stack = await startStack({
      name: 'hostile', redisDb: 7, simulator: true, logLevel: 'warn',
      billingEnv: { STRIPE_SECRET_KEY: 'sk_test_hostile', STRIPE_WEBHOOK_SECRET: 'whsec_hostile', STRIPE_API_BASE: stripe.url },
    });
    gw = stack.gateways[0]?.url ?? '';
    const owner = await newAccount(gw, 'hostile');
    managementKey = owner.managementKey;
    session = owner.session;
    const key = await newApiKey(gw, managementKey, { name: 'hostile' });
    apiKey = key.secret;
    keyId = key.id;
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await stripe?.stop();
  });

  const deepBodies: [string, string][] = [
    ['objects 5,000 deep', nestedObjects(5_000)],
    ['an array 5,000 deep inside a field', arrayInField('name', 5_000)],
    ['objects 33 deep (one past the default limit)', nestedObjects(33)],
  ];

  it.each(deepBodies)('POST /v1/keys with %s is 400 invalid_request', async (_label, raw) => {
    expectInvalid(await call('POST', `${gw}/v1/keys`, { raw, headers: bearer(managementKey) }), /nested/);
  });

  it.each(deepBodies)('PATCH /v1/keys/:id with %s is 400 invalid_request', async (_label, raw) => {
    expectInvalid(await call('PATCH', `${gw}/v1/keys/${keyId}`, { raw, headers: bearer(managementKey) }), /nested/);
  });

  it.each(deepBodies)('POST /v1/credits/checkout with %s is 400 invalid_request', async (_label, raw) => {
    expectInvalid(await call('POST', `${gw}/v1/credits/checkout`, { raw: raw.replace('"name"', '"amount_usd"'), headers: bearer(managementKey) }), /nested/);
  });

  it.each(deepBodies)('POST /v1/search with %s is 400 invalid_request', async (_label, raw) => {
    expectInvalid(await call('POST', `${gw}/v1/search`, { raw: raw.replace('"name"', '"query"'), headers: bearer(apiKey) }), /nested/);
  });

  it.each(deepBodies)('POST /dashboard/api/login with %s is 400 invalid_request', async (_label, raw) => {
    expectInvalid(await call('POST', `${gw}/dashboard/api/login`, { raw: raw.replace('"name"', '"email"') }), /nested/);
  });

  it('a body nested exactly to the limit (32) is read and judged on its fields', async () => {
    // Depth 32 is allowed by the depth check; the key route then refuses the unknown field by name.
    const response = await call('POST', `${gw}/v1/keys`, { raw: nestedObjects(32), headers: bearer(managementKey) });
    expectInvalid(response, /unknown field "a"/);
  });

  it.each([
    ['from=0000-01-01&to=0000-01-01', /from/],
    ['from=2026-01-01&to=0000-12-31', /to/],
    ['from=0000-12-31&to=2026-01-01', /from/],
  ])('GET /v1/usage?%s is 400 naming the field', async (query, field) => {
    expectInvalid(await call('GET', `${gw}/v1/usage?${query}`, { headers: bearer(managementKey) }), field);
  });

  it('the last day of year 9999 is a day like any other (to is inclusive: the range ends at year 10000)', async () => {
    const response = await call('GET', `${gw}/v1/usage?from=9999-12-31&to=9999-12-31`, { headers: bearer(managementKey) });
    expect(response.status).toBe(200);
  });

  it('a key expiry in year 0000 is 400 naming expires_at', async () => {
    expectInvalid(await call('POST', `${gw}/v1/keys`, { body: { name: 'k', expires_at: '0000-01-01T00:00:00Z' }, headers: bearer(managementKey) }), /expires_at/);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('a body with the key %s is refused as an unknown field on POST and PATCH /v1/keys', async (key) => {
    expectInvalid(await call('POST', `${gw}/v1/keys`, { raw: `{"name":"k","${key}":1}`, headers: bearer(managementKey) }), new RegExp(`unknown field "${key}"`));
    expectInvalid(await call('PATCH', `${gw}/v1/keys/${keyId}`, { raw: `{"${key}":1}`, headers: bearer(managementKey) }), new RegExp(`unknown field "${key}"`));
    expectInvalid(await call('POST', `${gw}/v1/credits/checkout`, { raw: `{"amount_usd":5,"${key}":{"polluted":true}}`, headers: bearer(managementKey) }), new RegExp(`unknown field "${key}"`));
    expectInvalid(await call('POST', `${gw}/dashboard/api/management-keys`, { raw: `{"name":"k","${key}":1}`, headers: session }), new RegExp(`unknown field "${key}"`));
  });

  it.each(['__proto__', 'constructor', 'prototype'])('a search body with the key %s is refused as an unknown field', async (key) => {
    expectInvalid(await call('POST', `${gw}/v1/search`, { raw: `{"query":"q","model":"exa/fast","${key}":{"polluted":true}}`, headers: bearer(apiKey) }), new RegExp(key));
  });

  it('a nested __proto__ key is refused too', async () => {
    expectInvalid(await call('POST', `${gw}/v1/keys`, { raw: '{"name":"k","limit_usd":{"__proto__":{"x":1}}}', headers: bearer(managementKey) }));
  });
});
