import { bearer, call, newAccount, newApiKey, startStack } from '@svc/test-kit';
import type { JsonResponse, Stack } from '@svc/test-kit';
import { FakeStripe } from '../../tools/fake-stripe/src';

/**
 * The inputs issue 29 found reaching a 500 (or accepted when they must be refused), each
 * sent through the gateway to the service that owns the route: bodies nested 5,000 levels
 * deep, dates outside years 0001-9999, and the keys `__proto__`, `constructor` and
 * `prototype`. Every one must be 400 invalid_request in the platform's shape. And two a later
 * hostile-input run found: a lone UTF-16 surrogate in a sign-up email (400) and the first
 * valid day as the end of a day range (200, the range starting on that day).
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

describe('hostile bodies and dates found by hostile-input runs (refused with 400, or answered; never a 500)', () => {
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

  it.each(deepBodies)('POST /v1/extract with %s is 400 invalid_request', async (_label, raw) => {
    expectInvalid(await call('POST', `${gw}/v1/extract`, { raw: raw.replace('"name"', '"urls"'), headers: bearer(apiKey) }), /nested/);
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

  it.each(['__proto__', 'constructor', 'prototype'])('an extract body with the key %s is refused as an unknown field', async (key) => {
    expectInvalid(await call('POST', `${gw}/v1/extract`, { raw: `{"model":"exa/contents","urls":["https://example.com/a"],"${key}":{"polluted":true}}`, headers: bearer(apiKey) }), new RegExp(key));
  });

  // A URL is text the gateway sends on to a provider and keys its cache with: one holding a
  // lone surrogate (no UTF-8 text can hold it) or raw bytes is refused before either.
  it.each(['https://example.com/\\ud800', 'https://example.com/a?q=x\\udc00y', 'https://exa\\udfffmple.com/', 'https://example.com/\\u0000'])('an extract URL holding %s is 400 naming urls', async (escaped) => {
    expectInvalid(await call('POST', `${gw}/v1/extract`, { raw: `{"model":"exa/contents","urls":["${escaped}"]}`, headers: bearer(apiKey) }), /urls/);
  });

  it('a nested __proto__ key is refused too', async () => {
    expectInvalid(await call('POST', `${gw}/v1/keys`, { raw: '{"name":"k","limit_usd":{"__proto__":{"x":1}}}', headers: bearer(managementKey) }));
  });

  // A hostile-input run found these two reaching a 500: a lone UTF-16 surrogate (JSON's
  // "\ud800" escape; no UTF-8 text can hold it) in a sign-up email, and the first valid day
  // as the end of a usage range, whose default start (29 days before) fell in year 0000.
  it.each(['\\ud800', 'x\\udc00y', 'a\\ud800@example.com', 'a@exa\\udfffmple.com', 'a@example.com\\ud83d'])('a sign-up email holding a lone surrogate (%s) is 400 naming email', async (escaped) => {
    const raw = `{"email":"${escaped}","password":"correct horse battery staple"}`;
    expectInvalid(await call('POST', `${gw}/dashboard/api/signup`, { raw }), /email/);
  });

  it.each(['\\ud800', 'x\\udc00y@example.com'])('a sign-in with an email holding a lone surrogate (%s) is refused as wrong credentials, never a 500', async (escaped) => {
    expectInvalid(await call('POST', `${gw}/dashboard/api/login`, { raw: `{"email":"${escaped}","password":"correct horse battery staple"}` }), /email or password is wrong/);
  });

  // The extended fuzz suite found this one: a redirect URI holding a lone surrogate reached
  // PostgreSQL as an element of a text[] (Prisma sends arrays as JSON, whose parser refuses the
  // escape) and answered 500. OAuth's own error, in OAuth's shape (RFC 7591 section 3.2.2).
  it.each(['https://app.example.com/\\ud800', 'https://app.example.com/cb?x=\\udc00'])('POST /oauth/register with a redirect URI holding a lone surrogate (%s) is 400 invalid_redirect_uri', async (escaped) => {
    const response = await call('POST', `${gw}/oauth/register`, { raw: `{"client_name":"fuzz","redirect_uris":["${escaped}"]}` });
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 400, error: 'invalid_redirect_uri' });
  });

  it.each([
    ['to=0001-01-01', '0001-01-01', '0001-01-01'],
    ['to=0001-01-05', '0001-01-01', '0001-01-05'],
    ['from=0001-01-01&to=0001-01-01', '0001-01-01', '0001-01-01'],
  ])('GET /v1/usage?%s answers 200: a range that would start before 0001-01-01 starts there', async (query, from, to) => {
    const response = await call('GET', `${gw}/v1/usage?${query}`, { headers: bearer(managementKey) });
    expect({ status: response.status, from: response.body?.from, to: response.body?.to, data: response.body?.data }).toEqual({ status: 200, from, to, data: [] });
  });

  it('the same day range through the dashboard (usage, daily spend) and the operator\'s ledger export answers 200', async () => {
    const usage = await call('GET', `${gw}/dashboard/api/usage?to=0001-01-01`, { headers: session });
    expect({ status: usage.status, from: usage.body?.from }).toEqual({ status: 200, from: '0001-01-01' });
    const dailySpend = await call('GET', `${gw}/dashboard/api/usage/daily-by-model?to=0001-01-01`, { headers: session });
    expect(dailySpend.status).toBe(200);
    const exported = await call('GET', `${stack.billing.operatorUrl}/operator/ledger/export?to=0001-01-01`, { headers: bearer(stack.operatorToken) });
    expect({ status: exported.status, disposition: exported.headers.get('content-disposition') }).toEqual({ status: 200, disposition: 'attachment; filename="ledger-0001-01-01-0001-01-01.csv"' });
  });
});
