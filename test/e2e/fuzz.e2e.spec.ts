import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Client } from 'pg';
import { OAUTH_PATHS, WEBHOOK_EVENT_TYPES } from '@svc/contracts';
import { bearer, call, grantCredits, newAccount, newApiKey, repoRoot, startStack } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { FakeStripe } from '../../tools/fake-stripe/src';
import { approve, codeOf, exchange, pkce, register, startAuthorization } from './oauth-flow';

/**
 * Property-based fuzzing of the whole public edge, against the real stack (gateway,
 * account-admin, billing, the simulator, a fake Stripe): at least 50,000 generated hostile
 * requests per run across every public route (methods, paths, query strings, headers,
 * content types, bodies) plus raw malformed HTTP. Every answer must be below 500, every
 * JSON error must be the platform's shape carrying the request id of its header, and a
 * refused request must store nothing (rows created match the 2xx answers).
 *
 * Seeded: FUZZ_SEED reproduces a run (the seed is printed on failure); FUZZ_RUNS sets the
 * count. Requests found failing along the way stay below as regression cases.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 50_000);
const RAW_RUNS = Math.max(200, Math.round(RUNS / 40));
const CONCURRENCY = 16;
const ANSWER_TIMEOUT_MS = 30_000;

interface FuzzRequest {
  /** A regression case's required status (issue 29's inputs must be refused, not just not fail). */
  status?: number;
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Outcome {
  request: FuzzRequest;
  status: number;
  problem?: string;
}

/** Found by earlier runs (or by hand): always sent first. */
const REGRESSIONS: (Omit<FuzzRequest, 'headers'> & { status?: number })[] = [
  { route: '/v1/keys', method: 'POST', path: '/v1/keys', body: '{"name":"a\\u0000b"}' },
  { route: '/v1/keys', method: 'GET', path: `/v1/keys?cursor=${Buffer.from('{"t":8640000000000001,"i":"key_AAAAAAAAAAAAAAAAAAAAAAAA"}').toString('base64url')}` },
  { route: '/v1/keys/:id', method: 'GET', path: `/v1/keys/${'a'.repeat(101)}` },
  { route: '/v1/keys/:id', method: 'GET', path: '/v1/keys/%ff' },
  { route: '/dashboard/api/signup', method: 'POST', path: '/dashboard/api/signup', body: '{"email":"a\\u0000@x.io","password":"correct horse battery"}' },
  { route: '/v1/search', method: 'POST', path: '/v1/search', body: '{"query":"q","models":[],"max_results":1e309}' },
  { route: '/v1/extract', method: 'POST', path: '/v1/extract', body: '{"urls":["https://example.com/\\ud800"]}' },
  { route: '/v1/extract', method: 'POST', path: '/v1/extract', body: '{"urls":["http://[::1"],"max_total_chars":1e309}' },
  { route: '/v1/credits/checkout', method: 'POST', path: '/v1/credits/checkout', body: '{"amount_usd":5,"success_url":"http://[::1"}' },
  // Seed 20261124 found it: the whole-cents check converted 1e308 to micro-USD (a RangeError, 500).
  { route: '/v1/credits/checkout', method: 'POST', path: '/v1/credits/checkout', body: '{"success_url":1e-7,"amount_usd":1e+308}' },
  // Issue 29 found these (500 internal, or accepted): bodies 5,000 levels deep, year 0000, __proto__.
  { route: '/v1/keys', method: 'POST', path: '/v1/keys', body: nestedObjects(5_000), status: 400 },
  { route: '/v1/keys', method: 'POST', path: '/v1/keys', body: `{"name":${'['.repeat(5_000)}1${']'.repeat(5_000)}}`, status: 400 },
  { route: '/v1/keys/:id', method: 'PATCH', path: '/v1/keys/key_AAAAAAAAAAAAAAAAAAAAAAAA', body: nestedObjects(5_000), status: 400 },
  { route: '/v1/credits/checkout', method: 'POST', path: '/v1/credits/checkout', body: nestedObjects(5_000), status: 400 },
  { route: '/v1/credits/checkout', method: 'POST', path: '/v1/credits/checkout', body: `{"amount_usd":${'['.repeat(5_000)}5${']'.repeat(5_000)}}`, status: 400 },
  { route: '/v1/usage', method: 'GET', path: '/v1/usage?from=0000-01-01&to=0000-01-01', status: 400 },
  { route: '/v1/keys', method: 'POST', path: '/v1/keys', body: '{"__proto__":1}', status: 400 },
  { route: '/v1/keys/:id', method: 'PATCH', path: '/v1/keys/key_AAAAAAAAAAAAAAAAAAAAAAAA', body: '{"__proto__":1}', status: 400 },
  // A hostile-input run found the first two (500), this suite's lone surrogates the third (500).
  { route: '/dashboard/api/signup', method: 'POST', path: '/dashboard/api/signup', body: '{"email":"x\\udc00y","password":"correct horse battery staple"}', status: 400 },
  { route: '/v1/usage', method: 'GET', path: '/v1/usage?to=0001-01-01', status: 200 },
  { route: OAUTH_PATHS.register, method: 'POST', path: OAUTH_PATHS.register, body: '{"redirect_uris":["https://app.example.com/\\ud800"]}', status: 400 },
];

const FIELD_NAMES_FOR_DEPTH = ['name', 'query', 'amount_usd', 'limit_usd', 'email', 'models', 'expires_at'];

function nestedObjects(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/**
 * Text holding a lone UTF-16 surrogate (a high or low half of a pair with no other half):
 * JSON can carry it (`"\\ud800"`), UTF-8 cannot. Alone, between other text, at either end,
 * and in the shapes fields check (an email, a URL, an id).
 */
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));
const loneSurrogateText = fc.oneof(
  fc.constantFrom('\ud800', '\udfff', 'x\udc00y', 'a\ud83d', '\ude00a', 'a\ud800@example.com', 'a@exa\udfffmple.com', 'https://example.com/\ud800', 'key_\ud800AAAAAAAAAAAAAAAAAAAAAAA'),
  fc.tuple(fc.string({ maxLength: 12 }), loneSurrogate, fc.string({ maxLength: 12 })).map(([before, half, after]) => before + half + after),
);

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '%00', '%ff', '%', '../..', '__proto__', 'constructor', 'null', '[]', '{}', '😀'.repeat(30), 'x'.repeat(3000)),
  fc.constantFrom('key_AAAAAAAAAAAAAAAAAAAAAAAA', 'mkey_AAAAAAAAAAAAAAAAAAAAAAAA', 'acct_AAAAAAAAAAAAAAAAAAAAAAAA', 'exa/fast', 'brave/web', 'tavily', 'exa', 'nope/nope'),
  loneSurrogateText,
);

/**
 * A string percent-encoded for a URL or a form, lone surrogates included: encodeURIComponent
 * throws on them and URLSearchParams turns them into U+FFFD, so each is written as the three
 * bytes a careless encoder sends (`%ED%A0%80` for U+D800), which are not UTF-8.
 */
function percentEncode(text: string): string {
  let out = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -1, 1e308, -1e308, 5, 10_000, 10_000.01, 4.99, 0.0000001, Number.MAX_SAFE_INTEGER, 8_640_000_000_000_001),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileText, { maxLength: 12 }),
  fc.dictionary(hostileText, hostileText, { maxKeys: 3 }),
  fc.constantFrom('2030-01-01T00:00:00Z', '2020-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '9999-12-31T23:59:59Z', 'daily', 'weekly', 'monthly', 'hourly'),
);

/** Bodies nested around and far past the depth limit (32): objects, arrays, mixed, inside a field. */
const deepBody = fc.tuple(fc.oneof(fc.integer({ min: 28, max: 40 }), fc.integer({ min: 41, max: 20_000 })), fc.constantFrom('{"a":', '[', '{"name":[', '[{"x":'), fc.constantFrom(...FIELD_NAMES_FOR_DEPTH))
  .map(([depth, open, field]) => {
    const closeOf = (o: string): string => [...o].filter((c) => c === '{' || c === '[').reverse().map((c) => (c === '{' ? '}' : ']')).join('');
    const levels = open === '{"name":[' || open === '[{"x":' ? Math.ceil(depth / 2) : depth;
    return `{"${field}":${open.repeat(levels)}1${closeOf(open).repeat(levels)}}`;
  });

/** Dates at and past the ends of years 0001-9999, in the shapes the API reads (days and RFC 3339). */
const extremeDay = fc.constantFrom('0000-01-01', '0000-12-31', '0001-01-01', '0001-01-02', '0001-01-30', '0001-01-31', '9999-12-30', '9999-12-31', '10000-01-01', '-0001-01-01', '+002026-01-01', '0000-00-00', '9999-13-01');
const extremeTimestamp = fc.constantFrom('0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z', '0001-01-01T00:00:00+01:00', '0001-01-01T00:59:59-01:00', '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59-01:00', '9999-12-31T23:59:59+14:00', '10000-01-01T00:00:00Z', '+275760-09-13T00:00:00Z', '-271821-04-20T00:00:00Z', '1970-01-01T00:00:00Z');
/** Both ends of a range: a day range (`from`, `to`: usage, daily spend) or a time range (the audit log's `from`, `to`). */
const rangeEnd = fc.oneof(extremeDay, extremeTimestamp);

/** Keys that name JavaScript's object machinery, at the top of a body or inside a field. */
const prototypeKey = fc.constantFrom('__proto__', 'constructor', 'prototype');
const prototypeBody = fc.tuple(prototypeKey, fc.constantFrom(...FIELD_NAMES_FOR_DEPTH), fc.boolean(), fc.constantFrom('1', '{}', '{"polluted":true}', 'null', '"x"'))
  .map(([key, field, nested, value]) => (nested ? `{"${field}":{"${key}":${value}}}` : `{"${field}":"k","${key}":${value}}`));

/** Bodies: right-shaped objects with hostile values, random JSON, and text that is not JSON. */
const FIELDS: string[] = ['query', 'model', 'models', 'max_results', 'name', 'limit_usd', 'limit_reset', 'expires_at', 'disabled', 'email', 'password',
  'amount_usd', 'success_url', 'cancel_url', 'key', 'type', 'data', '__proto__', 'constructor', 'extra', 'url', 'events', 'enabled', 'client_name', 'redirect_uris',
  'urls', 'contents', 'format'];
const body = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), hostileValue, { maxKeys: 5 }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: fc.json() },
  { weight: 1, arbitrary: hostileText },
  { weight: 1, arbitrary: deepBody },
  { weight: 1, arbitrary: prototypeBody },
  { weight: 1, arbitrary: fc.constantFrom('{"query":', '{"a":1}{"b":2}', '\u0000', '{"__proto__":{"polluted":true}}', `{"name":"${'x'.repeat(70_000)}"}`, '[1,2,3]', '"text"', '1e999') },
);

const queryString = fc.oneof(
  fc.constant(''),
  fc.dictionary(fc.constantFrom('limit', 'cursor', 'from', 'to', 'group_by', 'key_id', 'include', 'x', 'api_key', 'action', 'actor_id', 'target_id'), hostileText, { maxKeys: 4 })
    .map((q) => `?${Object.entries(q).map(([k, v]) => `${k}=${percentEncode(v)}`).join('&')}`),
  fc.tuple(rangeEnd, rangeEnd).map(([from, to]) => `?from=${percentEncode(from)}&to=${percentEncode(to)}`),
  // One end alone: the other is the default (today, or 29 days before the given end).
  fc.tuple(fc.constantFrom('from', 'to'), rangeEnd).map(([end, value]) => `?${end}=${percentEncode(value)}`),
  prototypeKey.map((key) => `?${key}=1`),
  fc.constantFrom('?limit=abc', '?limit=0', '?limit=101', '?limit=1&limit=2', '?cursor=', '?from=2026-13-01', '?group_by=hour', '?group_by=kind', '?%', '?a=%zz', '?from=2020-01-01&to=2026-01-01'),
);

const segment = fc.oneof(hostileText.map((t) => percentEncode(t)), fc.constantFrom('%ff', '%00', '..', 'brave', 'exa', 'tavily', 'BRAVE', 'a'.repeat(101), 'a'.repeat(300)));

const MODEL_IDS = ['brave/web', 'brave/news', 'exa/auto', 'exa/fast', 'exa/deep', 'tavily/basic', 'tavily/advanced'];

/** Bodies of the right shape with hostile values, so requests get past the first checks. */
const searchBody = fc.record({
  query: fc.oneof(hostileText, fc.constantFrom('rust async runtimes', 'a', ' ')),
  model: fc.oneof(fc.constantFrom(...MODEL_IDS), hostileText),
  models: fc.oneof(fc.array(fc.constantFrom(...MODEL_IDS), { maxLength: 12 }), fc.array(hostileText, { maxLength: 3 })),
  max_results: fc.oneof(fc.integer({ min: -5, max: 150 }), hostileValue),
  contents: fc.oneof(fc.constantFrom('none', 'text', 'highlights'), hostileValue),
  max_chars_per_result: fc.oneof(fc.integer({ min: -5, max: 30_000 }), hostileValue),
  max_total_chars: fc.oneof(fc.integer({ min: -5, max: 3_000_000 }), hostileValue),
}, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const EXTRACT_MODEL_IDS = ['exa/contents', 'tavily/extract', 'tavily/extract-advanced'];
/** POST /v1/extract: URLs (public, private, hostile, failing on purpose at the simulator), models, formats and options. */
const extractBody = fc.record({
  urls: fc.oneof(
    { weight: 3, arbitrary: fc.array(fc.oneof(fc.webUrl({ validSchemes: ['https', 'http'] }), fc.constantFrom('https://example.com/sim-fail-exa', 'https://example.com/sim-fail-all', 'https://example.com/a#frag')), { minLength: 1, maxLength: 4 }) },
    fc.array(fc.oneof(hostileText, fc.constantFrom('http://[::1', 'https://example.com/\ud800', 'ftp://example.com/', `https://example.com/${'p'.repeat(3000)}`)), { maxLength: 25 }),
    hostileValue,
  ),
  model: fc.oneof(fc.constantFrom(...EXTRACT_MODEL_IDS, 'exa/fast'), hostileText),
  models: fc.oneof(fc.array(fc.constantFrom(...EXTRACT_MODEL_IDS), { maxLength: 4 }), fc.array(hostileText, { maxLength: 3 })),
  format: fc.oneof(fc.constantFrom('text', 'markdown'), hostileValue),
  query: fc.oneof(fc.constantFrom('rust async runtimes', ''), hostileValue),
  max_age_s: fc.oneof(fc.integer({ min: -5, max: 100_000_000 }), hostileValue),
  max_chars_per_url: fc.oneof(fc.integer({ min: -5, max: 200_000 }), hostileValue),
  max_total_chars: fc.oneof(fc.integer({ min: -5, max: 3_000_000 }), hostileValue),
}, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const keyBody = fc.record({
  name: hostileText,
  limit_usd: fc.oneof(fc.double({ min: -1, max: 100 }), hostileValue),
  limit_reset: fc.oneof(fc.constantFrom('daily', 'weekly', 'monthly', null), hostileText),
  expires_at: fc.oneof(fc.date({ min: new Date('2020-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()), extremeTimestamp, hostileValue),
  disabled: fc.oneof(fc.boolean(), hostileValue),
}, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const RESEARCH_MODEL_IDS = ['exa/agent-minimal', 'exa/agent-low', 'exa/agent-auto', 'tavily/research-mini', 'tavily/research-pro'];
/** POST /v1/research: mostly a real model and a cap, with hostile input, schemas (deep, huge, lone surrogates) and metadata. */
const hostileResearchBody = fc.record({
  input: fc.oneof(hostileText, fc.constantFrom('tides and the moon', ' ', 'x'.repeat(8_001))),
  model: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...RESEARCH_MODEL_IDS) }, fc.constantFrom(...MODEL_IDS), hostileText),
  models: fc.oneof(fc.array(fc.constantFrom(...RESEARCH_MODEL_IDS), { maxLength: 7 }), fc.array(hostileText, { maxLength: 3 }), hostileValue),
  max_cost_usd: fc.oneof({ weight: 3, arbitrary: fc.double({ min: 0, max: 2, noNaN: true }) }, fc.constantFrom(0, -1, 1e-7, 1000.000001, 1e308), hostileValue),
  output_schema: fc.oneof(fc.constant({ type: 'object', properties: { a: { type: 'string' } } }), fc.constant(JSON.parse(`${'{"a":'.repeat(12)}1${'}'.repeat(12)}`) as unknown), fc.constant({ big: 'x'.repeat(17_000) }), hostileValue),
  metadata: fc.oneof(fc.dictionary(fc.string({ minLength: 1, maxLength: 45 }), fc.oneof(fc.string({ maxLength: 20 }), hostileValue), { maxKeys: 20 }), hostileValue),
}, { requiredKeys: [] });
/** Bodies a real client sends (a run is created when the key and balance allow), and hostile ones. */
const researchBody = fc.oneof(
  fc.record({
    input: fc.constantFrom('tides and the moon', 'how do heat pumps work?'),
    model: fc.constantFrom('exa/agent-minimal', 'exa/agent-low', 'tavily/research-mini'),
    max_cost_usd: fc.integer({ min: 50_000, max: 2_000_000 }).map((micros) => micros / 1_000_000),
    metadata: fc.constantFrom({ team: 'fuzz' }, { 'a.b-c_d': 'x'.repeat(500) }),
  }, { requiredKeys: ['input', 'model', 'max_cost_usd'] }),
  { weight: 3, arbitrary: hostileResearchBody },
).map((o) => JSON.stringify(o));
const credentialsBody = fc.record({ email: fc.oneof(fc.emailAddress(), hostileText), password: fc.oneof(fc.string({ minLength: 12, maxLength: 40 }), hostileText) }, { requiredKeys: [] }).map((o) => JSON.stringify(o));
/** The mail links' bodies: a link's token (a real link's shape, or hostile), with a new password for a reset. */
const linkToken = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), hostileText, fc.constant('t'.repeat(300)));
const confirmBody = fc.record({ token: linkToken }, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const resetBody = fc.record({ token: linkToken, password: fc.oneof(fc.string({ minLength: 12, maxLength: 40 }), hostileText) }, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const resetRequestBody = fc.record({ email: fc.oneof(fc.emailAddress(), hostileText) }, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const notificationBody = fc.record({ email: fc.oneof(fc.boolean(), hostileText, fc.constant(null)) }, { requiredKeys: [] }).map((o) => JSON.stringify(o));
const notificationType = fc.oneof(fc.constantFrom('balance.low', 'key.limit.threshold', 'auto_topup.failed', 'auto_topup.succeeded', '__proto__', 'constructor'), segment);
const checkoutBody = fc.record({
  amount_usd: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.double({ min: 0, max: 20_000 }), hostileValue),
  success_url: fc.oneof(fc.webUrl(), hostileText), cancel_url: fc.oneof(fc.webUrl(), hostileText),
}, { requiredKeys: [] }).map((o) => JSON.stringify(o));

/** The authorization server's inputs (docs/mcp.md, "Connectors"): client metadata, authorize parameters, token and revocation forms. */
const redirectUri = fc.oneof(
  fc.webUrl({ validSchemes: ['https'] }),
  hostileText,
  fc.constantFrom('https://localhost/cb', 'https://127.0.0.1/cb', 'https://[::1]/cb', 'https://10.0.0.1/cb', 'http://example.com/cb', 'javascript:alert(1)', 'https://example.com/cb#fragment', 'https://user:pass@example.com/cb', 'https://example.com/\ud800'),
);
/** Client metadata (RFC 7591): mostly acceptable values, so that requests also get past the first check, and hostile ones. */
const registerBody = fc.record({
  client_name: fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 40 }) }, hostileText, fc.constant('x'.repeat(20_000))),
  redirect_uris: fc.oneof({ weight: 3, arbitrary: fc.array(fc.webUrl({ validSchemes: ['https'] }), { minLength: 1, maxLength: 3 }) }, fc.array(redirectUri, { maxLength: 4 }), hostileValue),
  token_endpoint_auth_method: fc.oneof({ weight: 3, arbitrary: fc.constant('none') }, fc.constantFrom('client_secret_basic', 'client_secret_post'), hostileText),
  grant_types: fc.oneof({ weight: 3, arbitrary: fc.subarray(['authorization_code', 'refresh_token']) }, fc.subarray(['authorization_code', 'refresh_token', 'client_credentials', 'implicit']), hostileValue),
  response_types: fc.oneof({ weight: 3, arbitrary: fc.constant(['code']) }, fc.subarray(['code', 'token']), hostileValue),
  scope: hostileText,
  software_id: hostileText,
  logo_uri: redirectUri,
}, { requiredKeys: ['redirect_uris'] }).map((o) => JSON.stringify(o));

/** Name=value pairs as a query string or form body, each value percent-encoded (lone surrogates as their raw bytes); sometimes a name twice. */
function formOf(fields: Record<string, string | undefined>, repeat: string | undefined): string {
  const pairs = Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined).map(([name, value]) => `${name}=${percentEncode(value)}`);
  if (repeat !== undefined && pairs.length > 0) pairs.push(`${repeat}=x`);
  return pairs.join('&');
}

interface Secrets {
  apiKey: string;
  managementKey: string;
  session: Record<string, string>;
  keyId: string;
  /** A registered dynamic client and its redirect URI. */
  oauthClientId: string;
  oauthRedirectUri: string;
  /** An authorization request waiting for consent (decided by the first approve or deny that gets through). */
  oauthRequestId: string;
  /** The tokens of one grant (the refresh token rotates: the first use wins, a reuse revokes the grant). */
  refreshToken: string;
  accessToken: string;
  grantId: string;
  /** A webhook endpoint of the fuzzed account. */
  endpointId: string;
}

function oauthBodies(secrets: Secrets, gw: string): { authorizeQuery: fc.Arbitrary<string>; tokenForm: fc.Arbitrary<string>; revokeForm: fc.Arbitrary<string>; consentBody: fc.Arbitrary<string> } {
  const clientId = fc.oneof({ weight: 3, arbitrary: fc.constant(secrets.oauthClientId) }, hostileText, fc.constantFrom('https://localhost/client.json', 'https://127.0.0.1/c', 'http://example.com/c', 'https://[::1]/c'));
  const redirect = fc.oneof({ weight: 3, arbitrary: fc.constant(secrets.oauthRedirectUri) }, redirectUri);
  const challenge = fc.oneof({ weight: 3, arbitrary: fc.constant(pkce().challenge) }, hostileText, fc.constantFrom('a'.repeat(43), 'a'.repeat(42), 'a'.repeat(128)));
  const repeat = fc.option(fc.constantFrom('client_id', 'redirect_uri', 'grant_type', 'token', 'state'), { nil: undefined, freq: 8 });
  const authorizeQuery = fc.tuple(fc.record({
    response_type: fc.oneof({ weight: 3, arbitrary: fc.constant('code') }, fc.constantFrom('token', 'code id_token'), hostileText),
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: fc.oneof({ weight: 3, arbitrary: fc.constant('S256') }, fc.constantFrom('plain', 's256'), hostileText),
    state: fc.oneof(fc.string({ maxLength: 20 }), hostileText, fc.constant('s'.repeat(600))),
    resource: fc.oneof(fc.constant(gw + OAUTH_PATHS.resource), hostileText),
    scope: hostileText,
  }, { requiredKeys: [] }), repeat).map(([fields, twice]) => `${OAUTH_PATHS.authorize}?${formOf(fields, twice)}`);
  const tokenForm = fc.tuple(fc.record({
    grant_type: fc.oneof(fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password'), hostileText),
    code: fc.oneof(hostileText, fc.constantFrom('svc-oac-x', 'x'.repeat(300))),
    redirect_uri: redirect,
    client_id: clientId,
    code_verifier: fc.oneof(hostileText, fc.constant(pkce().verifier)),
    refresh_token: fc.oneof({ weight: 2, arbitrary: fc.constant(secrets.refreshToken) }, hostileText, fc.constantFrom('svc-ort-', secrets.accessToken)),
    resource: fc.oneof(fc.constant(gw + OAUTH_PATHS.resource), hostileText),
  }, { requiredKeys: [] }), repeat).map(([fields, twice]) => formOf(fields, twice));
  const revokeForm = fc.tuple(fc.record({
    token: fc.oneof(fc.constantFrom(secrets.refreshToken, secrets.accessToken, secrets.apiKey, 'svc-oat-x'), hostileText),
    token_type_hint: fc.oneof(fc.constantFrom('refresh_token', 'access_token'), hostileText),
    client_id: clientId,
  }, { requiredKeys: [] }), repeat).map(([fields, twice]) => formOf(fields, twice));
  const consentBody = fc.record({
    limit_usd: fc.oneof(fc.double({ min: -1, max: 100 }), hostileValue),
    limit_reset: fc.oneof(fc.constantFrom('daily', 'weekly', 'monthly', null), hostileText),
    expires_at: fc.oneof(extremeTimestamp, hostileValue, fc.constant(null)),
  }, { requiredKeys: [] }).map((o) => JSON.stringify(o));
  return { authorizeQuery, tokenForm, revokeForm, consentBody };
}

/** POST and PATCH /v1/webhook-endpoints: a URL (public https, private, loopback, hostile), event types, enabled. */
const endpointBody = fc.record({
  url: fc.oneof(fc.webUrl({ validSchemes: ['https'] }), redirectUri, hostileText, fc.constantFrom('https://169.254.169.254/latest', 'https://[::ffff:127.0.0.1]/x', 'http://127.0.0.1:1/x', `https://example.com/${'p'.repeat(3000)}`)),
  events: fc.oneof(fc.subarray([...WEBHOOK_EVENT_TYPES]), fc.array(fc.oneof(fc.constantFrom(...WEBHOOK_EVENT_TYPES), hostileText), { maxLength: 6 }), hostileValue),
  enabled: fc.oneof(fc.boolean(), hostileValue),
}, { requiredKeys: [] }).map((o) => JSON.stringify(o));

/** A generated request before its headers; `type`: the content type its shaped body is written in (else JSON). */
type RouteRequest = Omit<FuzzRequest, 'headers'> & { type?: string };

const FORM = 'application/x-www-form-urlencoded';

function routes(secrets: Secrets, gw: string): fc.Arbitrary<RouteRequest> {
  const oauth = oauthBodies(secrets, gw);
  const endpointPath = fc.oneof({ weight: 2, arbitrary: fc.constant(secrets.endpointId) }, segment).map((id) => `/v1/webhook-endpoints/${id}`);
  const requestPath = fc.oneof({ weight: 2, arbitrary: fc.constant(secrets.oauthRequestId) }, segment).map((id) => `/dashboard/api/oauth/requests/${id}`);
  const templates: [string, string[], fc.Arbitrary<string>, fc.Arbitrary<string>?, string?][] = [
    ['/v1/models', ['GET', 'POST', 'DELETE'], fc.constant('/v1/models')],
    ['/v1/credits/pricing', ['GET', 'PUT'], fc.constant('/v1/credits/pricing')],
    ['/v1/credits', ['GET', 'POST'], fc.constant('/v1/credits')],
    ['/v1/key', ['GET', 'PATCH'], fc.constant('/v1/key')],
    ['/v1/search', ['POST', 'POST', 'POST', 'GET'], fc.constant('/v1/search'), searchBody],
    ['/v1/extract', ['POST', 'POST', 'POST', 'GET'], fc.constant('/v1/extract'), extractBody],
    ['/v1/keys', ['GET', 'POST', 'POST', 'PUT'], fc.constant('/v1/keys'), keyBody],
    ['/v1/keys/:id', ['GET', 'PATCH', 'PATCH', 'DELETE', 'POST'], fc.oneof(segment, fc.constant(secrets.keyId)).map((id) => `/v1/keys/${id}`), keyBody],
    ['/v1/provider-keys', ['GET', 'POST'], fc.constant('/v1/provider-keys')],
    ['/v1/provider-keys/:provider', ['GET', 'PUT', 'DELETE', 'PATCH'], segment.map((p) => `/v1/provider-keys/${p}`)],
    ['/v1/credits/checkout', ['POST', 'POST', 'GET'], fc.constant('/v1/credits/checkout'), checkoutBody],
    ['/v1/credits/webhook', ['POST'], fc.constant('/v1/credits/webhook')],
    ['/v1/usage', ['GET', 'POST'], fc.constant('/v1/usage')],
    ['/dashboard', ['GET', 'POST'], fc.constant('/dashboard')],
    ['/dashboard/api/signup', ['POST', 'POST', 'GET'], fc.constant('/dashboard/api/signup'), credentialsBody],
    ['/dashboard/api/signup/confirm', ['POST', 'GET'], fc.constant('/dashboard/api/signup/confirm'), confirmBody],
    ['/dashboard/api/login', ['POST'], fc.constant('/dashboard/api/login'), credentialsBody],
    ['/dashboard/api/password-reset', ['POST', 'GET'], fc.constant('/dashboard/api/password-reset'), resetRequestBody],
    ['/dashboard/api/password-reset/confirm', ['POST'], fc.constant('/dashboard/api/password-reset/confirm'), resetBody],
    ['/dashboard/api/notifications', ['GET', 'POST'], fc.constant('/dashboard/api/notifications')],
    ['/dashboard/api/notifications/:event_type', ['PUT', 'GET'], notificationType.map((t) => `/dashboard/api/notifications/${t}`), notificationBody],
    ['/dashboard/api/logout', ['POST'], fc.constant('/dashboard/api/logout')],
    ['/dashboard/api/me', ['GET', 'DELETE'], fc.constant('/dashboard/api/me')],
    ['/dashboard/api/management-keys', ['GET', 'POST'], fc.constant('/dashboard/api/management-keys'), keyBody],
    ['/dashboard/api/management-keys/:id', ['DELETE', 'GET'], segment.map((id) => `/dashboard/api/management-keys/${id}`)],
    ['/dashboard/api/*', ['GET', 'POST', 'PUT', 'DELETE'], segment.map((s) => `/dashboard/api/${s}`)],
    ['/healthz', ['GET'], fc.constant('/healthz')],
    ['/v1/audit-log', ['GET', 'POST'], fc.constant('/v1/audit-log')],
    ['/dashboard/api/usage', ['GET'], fc.constant('/dashboard/api/usage')],
    ['/dashboard/api/usage/daily-by-model', ['GET'], fc.constant('/dashboard/api/usage/daily-by-model')],
    ['/dashboard/api/audit-log', ['GET'], fc.constant('/dashboard/api/audit-log')],
    [OAUTH_PATHS.serverMetadata, ['GET', 'POST'], fc.constant(OAUTH_PATHS.serverMetadata)],
    [OAUTH_PATHS.register, ['POST', 'POST', 'GET'], fc.constant(OAUTH_PATHS.register), registerBody],
    [OAUTH_PATHS.authorize, ['GET', 'GET', 'POST'], fc.oneof({ weight: 3, arbitrary: oauth.authorizeQuery }, fc.constant(OAUTH_PATHS.authorize))],
    [OAUTH_PATHS.token, ['POST', 'POST', 'GET'], fc.constant(OAUTH_PATHS.token), oauth.tokenForm, FORM],
    [OAUTH_PATHS.revoke, ['POST', 'POST', 'GET'], fc.constant(OAUTH_PATHS.revoke), oauth.revokeForm, FORM],
    ['/dashboard/api/oauth/requests/:id', ['GET', 'DELETE'], requestPath],
    ['/dashboard/api/oauth/requests/:id/approve', ['POST'], requestPath.map((p) => `${p}/approve`), oauth.consentBody],
    ['/dashboard/api/oauth/requests/:id/deny', ['POST'], requestPath.map((p) => `${p}/deny`)],
    ['/dashboard/api/connected-apps', ['GET', 'POST'], fc.constant('/dashboard/api/connected-apps')],
    ['/dashboard/api/connected-apps/:id', ['DELETE', 'GET'], fc.oneof(fc.constant(secrets.grantId), segment).map((id) => `/dashboard/api/connected-apps/${id}`)],
    ['/v1/webhook-endpoints', ['GET', 'POST', 'POST'], fc.constant('/v1/webhook-endpoints'), endpointBody],
    ['/v1/webhook-endpoints/:id', ['GET', 'PATCH', 'PATCH', 'DELETE'], endpointPath, endpointBody],
    ['/v1/webhook-endpoints/:id/rotate-secret', ['POST', 'GET'], endpointPath.map((p) => `${p}/rotate-secret`)],
    ['/v1/webhook-endpoints/:id/deliveries', ['GET'], endpointPath.map((p) => `${p}/deliveries`)],
    ['/v1/webhook-endpoints/:id/deliveries/:delivery/redeliver', ['POST'], fc.tuple(endpointPath, segment).map(([p, d]) => `${p}/deliveries/${d}/redeliver`)],
    ['/v1/research', ['POST', 'POST', 'POST', 'GET', 'PUT'], fc.constant('/v1/research'), researchBody],
    ['/v1/research/:id', ['GET', 'DELETE'], fc.oneof(segment, fc.constantFrom('rsr_0000000000000000000000000', 'rsr_')).map((id) => `/v1/research/${id}`)],
    ['/v1/research/:id/cancel', ['POST', 'GET'], fc.oneof(segment, fc.constant('rsr_0000000000000000000000000')).map((id) => `/v1/research/${id}/cancel`)],
    ['/dashboard/api/research', ['GET'], fc.constant('/dashboard/api/research')],
    ['/dashboard/api/research/:id/cancel', ['POST'], segment.map((id) => `/dashboard/api/research/${id}/cancel`)],
    ['(unknown)', ['GET', 'POST', 'OPTIONS', 'HEAD'], fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`)],
  ];
  return fc.constantFrom(...templates).chain(([route, methods, path, shaped, shapedType]) =>
    fc.record({
      route: fc.constant(route),
      method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE') }),
      // A path that carries its own query (authorize's parameters) gets the generic ones after them.
      path: fc.tuple(path, queryString).map(([p, q]) => (q === '' ? p : p.includes('?') ? `${p}&${q.slice(1)}` : p + q)),
      shapedBody: fc.option(shaped === undefined ? body.map((b) => ({ body: b, shaped: false })) : fc.oneof({ weight: 3, arbitrary: shaped.map((b) => ({ body: b, shaped: true })) }, { weight: 1, arbitrary: body.map((b) => ({ body: b, shaped: false })) }), { nil: undefined, freq: 4 }),
    }).map(({ shapedBody, ...request }): RouteRequest => ({
      ...request,
      body: shapedBody?.body,
      ...(shapedBody?.shaped === true && shapedType !== undefined ? { type: shapedType } : {}),
    })),
  );
}

function headersFor(secrets: Secrets): fc.Arbitrary<Record<string, string>> {
  const authorization = fc.oneof(
    fc.constant(undefined),
    { weight: 3, arbitrary: fc.constant(`Bearer ${secrets.apiKey}`) },
    { weight: 3, arbitrary: fc.constant(`Bearer ${secrets.managementKey}`) },
    fc.constantFrom('Bearer', 'Bearer ', 'Basic abc', 'Bearer svc-', 'Bearer svc-mgmt-', `Bearer ${secrets.apiKey}x`, `bearer ${secrets.apiKey}`, 'Bearer svc-\u00e9'),
    hostileText.map((t) => `Bearer svc-${t.replace(/[^\x20-\x7e]/g, 'a')}`),
  );
  const contentType = fc.oneof(
    { weight: 4, arbitrary: fc.constant('application/json') },
    fc.constantFrom(undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/merge-patch+json', 'application/json;;', '*/*'),
  );
  return fc.record({
    authorization,
    contentType,
    session: fc.boolean(),
    csrf: fc.oneof(fc.constant(undefined), fc.constant(secrets.session['x-csrf-token']), fc.constantFrom('', 'x', 'null')),
    idempotency: fc.option(fc.oneof(fc.uuid(), fc.constantFrom('', ' ', 'x'.repeat(300))), { nil: undefined }),
    extra: fc.option(fc.constantFrom<[string, string]>(['expect', '100-continue'], ['x-svc-account-id', 'acct_AAAAAAAAAAAAAAAAAAAAAAAA'], ['x-svc-internal-token', 'guess'], ['x-forwarded-for', '1.2.3.4'], ['accept-encoding', 'gzip'], ['x-svc-key-kind', 'management']), { nil: undefined }),
  }).map((h) => {
    const out: Record<string, string> = {};
    if (h.authorization !== undefined) out.authorization = h.authorization;
    if (h.contentType !== undefined) out['content-type'] = h.contentType;
    if (h.session) out.cookie = secrets.session.cookie ?? '';
    if (h.csrf !== undefined && h.csrf !== '') out['x-csrf-token'] = h.csrf;
    if (h.idempotency !== undefined && /^[\x20-\x7e]*$/.test(h.idempotency) && h.idempotency.trim() !== '') out['idempotency-key'] = h.idempotency;
    if (h.extra !== undefined) out[h.extra[0]] = h.extra[1];
    return out;
  });
}

/** Raw bytes that are not well-formed HTTP/1.1 requests. */
const rawRequest = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => `${s}\r\n\r\n`),
  fc.tuple(fc.constantFrom('get', 'G ET', 'GET\u0000', 'FOO', 'GET'), fc.constantFrom('/v1/models', 'v1/models', '*', 'http://x/v1/models', '/v1/models\u0000', ' /'), fc.constantFrom('HTTP/1.1', 'HTTP/9.9', 'HTTP/1', ''))
    .map(([m, p, v]) => `${m} ${p} ${v}\r\nHost: x\r\n\r\n`),
  fc.constantFrom(
    'GET /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
    'POST /v1/keys HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'POST /v1/search HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    `GET /v1/models HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
    'GET /v1/models HTTP/1.1\r\nHost x\r\n\r\n',
    'GET /v1/models HTTP/1.1\r\n Host: x\r\n\r\n',
  ),
);

function send(base: URL, agent: Agent, request: FuzzRequest): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
    const req = httpRequest({ host: base.hostname, port: base.port, method: request.method, path: request.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    // An answer that never comes is a failure of its own, not a hung run.
    req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    if (request.headers.expect !== undefined) req.on('continue', () => req.end(request.body));
    else req.end(request.body);
  });
}

/**
 * The authorization server's routes answer a refusal in OAuth's own shape (RFC 6749 section
 * 5.2, RFC 7591 section 3.2.2: `{"error": "...", "error_description": "..."}`), and
 * `/oauth/authorize` a refusal it must not redirect as a small HTML page for the person in the
 * browser; every other route (and the edge's own refusals on these) in the platform's shape.
 */
const OAUTH_ROUTES: ReadonlySet<string> = new Set([OAUTH_PATHS.register, OAUTH_PATHS.authorize, OAUTH_PATHS.token, OAUTH_PATHS.revoke]);

/** What is wrong with an answer, or undefined when it keeps every rule. */
function judge(request: FuzzRequest, status: number, headers: Record<string, string | string[] | undefined>, text: string): string | undefined {
  if (status >= 500) return `status ${status}: ${text.slice(0, 200)}`;
  if (request.status !== undefined && status !== request.status) return `status ${status}, expected ${request.status}: ${text.slice(0, 200)}`;
  const requestId = headers['x-svc-request-id'];
  if (typeof requestId !== 'string' || !/^req_[0-9A-Za-z]{24,}$/.test(requestId)) return 'no x-svc-request-id';
  const type = String(headers['content-type'] ?? '');
  if (status >= 400 && request.method !== 'HEAD') {
    const oauth = OAUTH_ROUTES.has(request.route);
    if (oauth && request.route === OAUTH_PATHS.authorize && type.startsWith('text/html')) return undefined;
    if (!type.includes('application/json')) return `error without a JSON body (${type})`;
    let parsed: { error?: { code?: unknown; message?: unknown; request_id?: unknown } | string };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return 'error body is not JSON';
    }
    if (oauth && typeof parsed.error === 'string') return parsed.error === '' ? 'OAuth error without a code' : undefined;
    if (typeof parsed.error !== 'object' || typeof parsed.error.code !== 'string' || typeof parsed.error.message !== 'string') return 'error body without code and message';
    if (parsed.error.request_id !== requestId) return 'error body request_id differs from the header';
  }
  return undefined;
}

async function pool<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  }));
  return results;
}

function rawSend(base: URL, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(base.port), base.hostname);
    let text = '';
    const timer = setTimeout(() => socket.destroy(), 5_000);
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.end(bytes, 'latin1');
  });
}

async function count(url: string, sql: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** The rows a request can create or delete, per kind (keys of OAuth grants apart: see the assertion). */
interface RowCounts {
  keys: number; managementKeys: number; deleted: number; users: number; checkouts: number; grants: number; dynamicClients: number; endpoints: number; researchRuns: number;
}

async function rowCounts(stack: Stack): Promise<RowCounts> {
  const notGrantKey = 'NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.key_id = keys.id)';
  return {
    keys: await count(stack.databases.accountAdmin, `SELECT count(*) AS n FROM keys WHERE kind = 'api' AND ${notGrantKey}`),
    managementKeys: await count(stack.databases.accountAdmin, "SELECT count(*) AS n FROM keys WHERE kind = 'management'"),
    deleted: await count(stack.databases.accountAdmin, `SELECT count(*) AS n FROM keys WHERE deleted_at IS NOT NULL AND ${notGrantKey}`),
    users: await count(stack.databases.accountAdmin, 'SELECT count(*) AS n FROM users'),
    checkouts: await count(stack.databases.billing, 'SELECT count(*) AS n FROM checkout_sessions'),
    grants: await count(stack.databases.accountAdmin, 'SELECT count(*) AS n FROM oauth_grants'),
    dynamicClients: await count(stack.databases.accountAdmin, "SELECT count(*) AS n FROM oauth_clients WHERE kind = 'dynamic'"),
    endpoints: await count(stack.databases.billing, 'SELECT count(*) AS n FROM webhook_endpoints'),
    researchRuns: await count(stack.databases.billing, 'SELECT count(*) AS n FROM research_runs'),
  };
}

describe(`fuzzing every public route (seed ${SEED}, ${RUNS} requests + ${RAW_RUNS} raw)`, () => {
  let stack: Stack;
  let stripe: FakeStripe;
  let secrets: Secrets;
  let gw: string;

  beforeAll(async () => {
    stripe = await FakeStripe.start({ secretKey: 'sk_test_fuzz', webhookSecret: 'whsec_fuzz' });
    stack = await startStack({
      name: 'fuzz', redisDb: 8, simulator: true, logLevel: 'warn',
      gatewayEnv: { PROVIDER_MAX_IN_FLIGHT_BRAVE: '1000', PROVIDER_MAX_IN_FLIGHT_EXA: '1000', PROVIDER_MAX_IN_FLIGHT_TAVILY: '1000', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' },
      billingEnv: { STRIPE_SECRET_KEY: 'sk_test_fuzz', STRIPE_WEBHOOK_SECRET: 'whsec_fuzz', STRIPE_API_BASE: stripe.url },
    });
    gw = stack.gateways[0]?.url ?? '';
    const owner = await newAccount(gw, 'fuzz');
    const key = await newApiKey(gw, owner.managementKey, { name: 'fuzz' });
    // Credits for research runs to get past the hold (no research worker runs them: they stay queued).
    await grantCredits(stack, owner.accountId, 50_000_000);
    // An OAuth client with one grant (its tokens) and one request waiting for consent, and a
    // webhook endpoint: the ids and tokens the generated requests aim at beside hostile ones.
    const oauthRedirectUri = 'https://app.example.com/callback';
    const client = await register(gw, 'fuzz client', [oauthRedirectUri]);
    if (client.status !== 201) throw new Error(`register answered ${client.status}: ${client.text}`);
    const oauthClientId = String(client.body.client_id);
    const granted = await startAuthorization(gw, oauthClientId, oauthRedirectUri);
    const approved = await approve(gw, owner.session, granted.requestId);
    if (approved.status !== 200) throw new Error(`approve answered ${approved.status}: ${approved.text}`);
    const tokens = await exchange(gw, oauthClientId, codeOf(String(approved.body.redirect_to)).code, oauthRedirectUri, granted.pkce.verifier);
    if (tokens.status !== 200) throw new Error(`token answered ${tokens.status}: ${tokens.text}`);
    const pending = await startAuthorization(gw, oauthClientId, oauthRedirectUri);
    const endpoint = await call('POST', `${gw}/v1/webhook-endpoints`, { body: { url: 'https://hooks.example.com/fuzz', events: ['balance.low'] }, headers: bearer(owner.managementKey) });
    if (endpoint.status !== 201) throw new Error(`webhook endpoint answered ${endpoint.status}: ${endpoint.text}`);
    secrets = {
      apiKey: key.secret, managementKey: owner.managementKey, session: owner.session, keyId: key.id,
      oauthClientId, oauthRedirectUri, oauthRequestId: pending.requestId, refreshToken: String(tokens.body.refresh_token), accessToken: String(tokens.body.access_token),
      grantId: String(approved.body.grant_id), endpointId: String(endpoint.body.id),
    };
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await stripe?.stop();
  });

  it('never answers 5xx, always answers errors in the platform shape with the header\'s request id, and stores nothing for a refused request', async () => {
    const base = new URL(stack.gateways[0]?.url ?? '');
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const rowsBefore = await rowCounts(stack);
    const generated = fc.sample(fc.record({ route: routes(secrets, gw), headers: headersFor(secrets) }), { seed: SEED, numRuns: RUNS })
      .map(({ route: { type, ...route }, headers }): FuzzRequest => {
        // A valid logout would end the session every other session request uses.
        if (route.route === '/dashboard/api/logout' && headers['x-csrf-token'] === secrets.session['x-csrf-token']) return { ...route, headers: { ...headers, 'x-csrf-token': 'x' } };
        // A shaped form body (token, revoke) goes out as a form where the headers chose JSON.
        if (type !== undefined && headers['content-type'] === 'application/json') return { ...route, headers: { ...headers, 'content-type': type } };
        return { ...route, headers };
      });
    const requests: FuzzRequest[] = [
      ...REGRESSIONS.map((r) => ({ ...r, headers: { authorization: `Bearer ${secrets.managementKey}`, 'content-type': 'application/json' } })),
      ...generated,
    ];
    const started = Date.now();
    const outcomes = await pool(requests, CONCURRENCY, async (request): Promise<Outcome> => {
      try {
        const response = await send(base, agent, request);
        return { request, status: response.status, problem: judge(request, response.status, response.headers, response.text) };
      } catch (error) {
        return { request, status: 0, problem: `no answer: ${error instanceof Error ? error.message : String(error)}` };
      }
    });
    agent.destroy();
    const raws = fc.sample(rawRequest, { seed: SEED, numRuns: RAW_RUNS });
    const rawOutcomes = await pool(raws, 8, async (bytes) => {
      const text = await rawSend(base, bytes);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      // A connection may also be closed without an answer where none can be written.
      const problem = status >= 500 ? `raw ${status}` : status !== 0 && !/x-svc-request-id: req_/i.test(text) ? 'raw answer without x-svc-request-id' : undefined;
      return { bytes, status, problem };
    });
    const elapsedMs = Date.now() - started;

    // The figures docs/fuzzing.md reports: requests and statuses per route.
    const perRoute = new Map<string, Map<number, number>>();
    for (const { request, status } of outcomes) {
      const byStatus = perRoute.get(request.route) ?? new Map<number, number>();
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      perRoute.set(request.route, byStatus);
    }
    const rawStatuses = new Map<number, number>();
    for (const { status } of rawOutcomes) rawStatuses.set(status, (rawStatuses.get(status) ?? 0) + 1);
    const summary = {
      seed: SEED, requests: outcomes.length, raw: rawOutcomes.length, elapsed_ms: elapsedMs,
      routes: Object.fromEntries([...perRoute].sort().map(([route, statuses]) => [route, Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0]))])),
      raw_statuses: Object.fromEntries([...rawStatuses].sort((a, b) => a[0] - b[0])),
    };
    const outDir = join(repoRoot(), 'test-results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'fuzz-summary.json'), JSON.stringify(summary, null, 2));

    const failures = [...outcomes.filter((o) => o.problem !== undefined), ...rawOutcomes.filter((o) => o.problem !== undefined)];
    if (failures.length > 0) {
      writeFileSync(join(outDir, 'fuzz-failures.json'), JSON.stringify(failures, null, 2));
      process.stderr.write(`fuzz: ${failures.length} failures with FUZZ_SEED=${SEED}; first: ${JSON.stringify(failures[0]).slice(0, 2000)}\n`);
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(Math.min(RUNS, 50_000));

    // Nothing stored by a refused request: every row created (or deleted: keys are kept with
    // deleted_at) has its 2xx answer.
    const ok = (route: string, method: string, status: number): number =>
      outcomes.filter((o) => o.request.route === route && o.request.method === method && o.status === status).length;
    const deletes = ok('/dashboard/api/management-keys/:id', 'DELETE', 200) + ok('/v1/keys/:id', 'DELETE', 200);
    const { researchRuns: runsAfter, ...after } = await rowCounts(stack);
    const { researchRuns: runsBefore, ...before } = rowsBefore;
    // A research run is created by a 202 only; a repeat of an Idempotency-Key answers 202 without a new run.
    expect(runsAfter - runsBefore).toBeLessThanOrEqual(ok('/v1/research', 'POST', 202));
    // An OAuth grant's API key is made by a consent and deleted with its grant (a revocation, a
    // refresh token's reuse, a connected app removed): counted with the grants, not the keys.
    expect(after).toEqual({
      keys: before.keys + ok('/v1/keys', 'POST', 201),
      managementKeys: before.managementKeys + ok('/dashboard/api/management-keys', 'POST', 201),
      deleted: before.deleted + deletes,
      users: before.users + ok('/dashboard/api/signup', 'POST', 201),
      checkouts: before.checkouts + ok('/v1/credits/checkout', 'POST', 201),
      grants: before.grants + ok('/dashboard/api/oauth/requests/:id/approve', 'POST', 200),
      dynamicClients: before.dynamicClients + ok(OAUTH_PATHS.register, 'POST', 201),
      endpoints: before.endpoints + ok('/v1/webhook-endpoints', 'POST', 201) - ok('/v1/webhook-endpoints/:id', 'DELETE', 200),
    });
  }, 600_000);
});
