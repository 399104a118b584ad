import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { OAUTH_LIFETIMES, OAUTH_LIMITS, OAUTH_PATHS, redisKeys } from '@svc/contracts';
import { bearer, call, grantCredits, newAccount, newApiKey, useStack, waitFor, SETTLING_STACK } from '@svc/test-kit';
import { approve, authorize, codeOf, exchange, form, pkce, refresh, register, requestIdOf, startAuthorization } from './oauth-flow';

/**
 * OAuth 2.1 for connectors on /mcp/oauth (docs/decisions/0029-oauth-for-connectors.md), over
 * real HTTP against the real stack (gateway, account-admin, billing and its ledger worker,
 * the provider simulator, PostgreSQL, Redis): the metadata documents, registration (dynamic
 * and by a Client ID Metadata Document), the code flow with PKCE and the dashboard's
 * consent, the official MCP SDK client calling web_search with the access token and the
 * charge landing on the grant's key, rotation, revocation, and every refusal.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
const PROPAGATION_MAX_MS = 15_000;

describe('OAuth for connectors on /mcp/oauth', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
  });
  const suite = useStack({
    ...SETTLING_STACK,
    name: 'oauth',
    redisDb: 13,
    // info: the grant and revocation lines are logged, and the test below checks no token is among them.
    logLevel: 'info',
    // The metadata documents below are served from loopback, allowed on a local stack only.
    accountAdminEnv: { OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'true' },
  }, { accountsDb: true });
  const gw = (): string => suite.gw;
  let documents: Server;
  let documentsUrl: string;

  beforeAll(async () => {
    // A client's own site publishing its Client ID Metadata Document.
    documents = createServer((request, response) => {
      const self = `${documentsUrl}${request.url ?? ''}`;
      const body = request.url === '/wrong-id.json'
        ? { client_id: 'https://elsewhere.example/client.json', client_name: 'Impostor', redirect_uris: [REDIRECT] }
        : { client_id: self, client_name: 'Doc Client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => documents?.close(resolve));
  });

  async function fundedAccount(usd: number): Promise<Awaited<ReturnType<typeof newAccount>>> {
    const account = await newAccount(gw(), 'oauth');
    await grantCredits(suite.stack, account.accountId, Math.round(usd * 1_000_000), { redis: suite.redis });
    return account;
  }

  async function newClient(name = 'Test Connector'): Promise<string> {
    const registered = await register(gw(), name, [REDIRECT]);
    expect(registered.status).toBe(201);
    return String(registered.body.client_id);
  }

  /** Register (or take) a client, authorize, approve with the session, exchange the code. */
  async function connect(session: Record<string, string>, options: { clientId?: string; consent?: Record<string, unknown> } = {}): Promise<{ clientId: string; access: string; refreshToken: string; keyId: string; grantId: string }> {
    const clientId = options.clientId ?? (await newClient());
    const started = await startAuthorization(gw(), clientId, REDIRECT);
    const approved = await approve(gw(), session, started.requestId, options.consent);
    expect(approved.status).toBe(200);
    const { code, state, iss } = codeOf(String(approved.body.redirect_to));
    expect(state).toBe(started.state);
    expect(iss).toBe(gw());
    const tokens = await exchange(gw(), clientId, code, REDIRECT, started.pkce.verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    return { clientId, access: String(tokens.body.access_token), refreshToken: String(tokens.body.refresh_token), keyId: String(approved.body.key_id), grantId: String(approved.body.grant_id) };
  }

  async function mcp(token: string): Promise<McpClient> {
    const transport = new StreamableHTTPClientTransport(new URL(gw() + OAUTH_PATHS.resource), { requestInit: { headers: bearer(token) } });
    const client = new McpClient({ name: 'oauth-e2e', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport);
    closers.push(() => client.close());
    return client;
  }

  /** A raw POST to the connector URL: authentication comes before the body, so any JSON will do. */
  const rawCall = (token: string | undefined, url = gw() + OAUTH_PATHS.resource): ReturnType<typeof call> =>
    call('POST', url, { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream', ...(token === undefined ? {} : bearer(token)) } });

  const keyOf = async (managementKey: string, keyId: string): Promise<Record<string, unknown> | undefined> => {
    const keys = await call('GET', `${gw()}/v1/keys?limit=100`, { headers: bearer(managementKey) });
    expect(keys.status).toBe(200);
    return (keys.body.data as Record<string, unknown>[]).find((key) => key.id === keyId);
  };

  it('publishes protected-resource metadata (RFC 9728) and authorization-server metadata (RFC 8414); its 401s point at them, /mcp offers no OAuth', async () => {
    const resource = await call('GET', gw() + OAUTH_PATHS.resourceMetadata);
    expect(resource.status).toBe(200);
    expect(resource.body).toMatchObject({ resource: gw() + OAUTH_PATHS.resource, authorization_servers: [gw()], bearer_methods_supported: ['header'] });
    const server = await call('GET', gw() + OAUTH_PATHS.serverMetadata);
    expect(server.status).toBe(200);
    expect(server.body).toMatchObject({
      issuer: gw(),
      authorization_endpoint: gw() + OAUTH_PATHS.authorize,
      token_endpoint: gw() + OAUTH_PATHS.token,
      registration_endpoint: gw() + OAUTH_PATHS.register,
      revocation_endpoint: gw() + OAUTH_PATHS.revoke,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
    });

    const challenge = `resource_metadata="${gw()}${OAUTH_PATHS.resourceMetadata}"`;
    const none = await rawCall(undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(`Bearer ${challenge}`);
    const account = await fundedAccount(1);
    const apiKey = await newApiKey(gw(), account.managementKey);
    const withKey = await rawCall(apiKey.secret);
    expect(withKey.status).toBe(401);
    expect(withKey.headers.get('www-authenticate')).toBe(`Bearer ${challenge}, error="invalid_token"`);

    const bearerOnly = await rawCall(undefined, `${gw()}/mcp`);
    expect(bearerOnly.status).toBe(401);
    expect(bearerOnly.headers.get('www-authenticate')).toBe('Bearer');
    expect((await call('GET', `${gw()}/.well-known/oauth-protected-resource/mcp`)).status).toBe(404);
    expect((await call('GET', `${gw()}/.well-known/oauth-protected-resource`)).status).toBe(404);
  });

  it('a dynamically registered client: consent with a limit, tokens, web_search through the official MCP client charged to the grant key, the limit enforced', async () => {
    const account = await fundedAccount(1);
    const { access, keyId } = await connect(account.session, { consent: { limit_usd: 0.018, limit_reset: 'daily', expires_at: null } });
    expect(access).toMatch(/^svc-oat-[A-Za-z0-9_-]{43}$/);

    const listed = await keyOf(account.managementKey, keyId);
    expect(listed).toMatchObject({ name: 'Test Connector', limit_usd: 0.018, limit_reset: 'daily', usage_usd: 0, disabled: false });

    const client = await mcp(access);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['deep_research', 'get_credits', 'get_research', 'list_models', 'web_fetch', 'web_search']);
    const before = Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)));
    const first = (await client.callTool({ name: 'web_search', arguments: { query: 'oauth connector', model: 'exa/fast', max_results: 1 } })) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect((first.structuredContent as { cost_usd: number }).cost_usd).toBe(0.009);
    expect(before - Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)))).toBe(9_000);
    expect(await keyOf(account.managementKey, keyId)).toMatchObject({ usage_usd: 0.009, limit_remaining_usd: 0.009 });

    const second = (await client.callTool({ name: 'web_search', arguments: { query: 'oauth connector 2', model: 'exa/fast', max_results: 1 } })) as CallToolResult;
    expect(second.isError).toBeFalsy();
    const third = (await client.callTool({ name: 'web_search', arguments: { query: 'oauth connector 3', model: 'exa/fast', max_results: 1 } })) as CallToolResult;
    expect(third.isError).toBe(true);
    const refusal = JSON.parse((third.content[1] as { text: string }).text) as { error: { code: string } };
    expect(refusal.error.code).toBe('key_limit_exceeded');
    expect(before - Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)))).toBe(18_000);
    // web_fetch on the connector URL takes the same path: the grant key's limit refuses it too, nothing charged.
    const fetched = (await client.callTool({ name: 'web_fetch', arguments: { urls: ['https://example.com/oauth/page'], model: 'exa/contents' } })) as CallToolResult;
    expect(fetched.isError).toBe(true);
    expect((JSON.parse((fetched.content[1] as { text: string }).text) as { error: { code: string } }).error.code).toBe('key_limit_exceeded');
    expect(before - Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)))).toBe(18_000);

    // The access token has one audience: it is no key anywhere else.
    expect((await rawCall(access, `${gw()}/mcp`)).status).toBe(401);
    expect((await call('POST', `${gw()}/v1/search`, { body: { query: 'x', model: 'exa/fast' }, headers: bearer(access) })).status).toBe(401);
    expect((await call('GET', `${gw()}/v1/key`, { headers: bearer(access) })).status).toBe(401);
  });

  it('the grant key\'s address fence (allowed_ips) holds on the connector URL: a token used from another address is refused 403 ip_not_allowed, as the fence refuses elsewhere, and nothing is spent', async () => {
    const account = await fundedAccount(1);
    const fenced = await connect(account.session);
    // The owner fences the grant's key (an ordinary API key) to addresses this client (127.0.0.1) is not in, before the token's first use.
    const patched = await call('PATCH', `${gw()}/v1/keys/${fenced.keyId}`, { body: { allowed_ips: ['192.0.2.0/24'] }, headers: bearer(account.managementKey) });
    expect(patched.status).toBe(200);
    const refused = await rawCall(fenced.access);
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'ip_not_allowed']);
    const search = await call('POST', gw() + OAUTH_PATHS.resource, {
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'fenced connector', model: 'exa/fast' } } },
      headers: { accept: 'application/json, text/event-stream', ...bearer(fenced.access) },
    });
    expect([search.status, search.body.error?.code]).toEqual([403, 'ip_not_allowed']);
    expect(Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)))).toBe(1_000_000);
    // A grant whose fence holds this address is served.
    const allowed = await connect(account.session);
    expect((await call('PATCH', `${gw()}/v1/keys/${allowed.keyId}`, { body: { allowed_ips: ['127.0.0.0/8', '::1'] }, headers: bearer(account.managementKey) })).status).toBe(200);
    const client = await mcp(allowed.access);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('web_search');
  });

  it('a client known by its Client ID Metadata Document; a document naming another client_id is refused', async () => {
    const account = await fundedAccount(1);
    const clientId = `${documentsUrl}/client.json`;
    const { access, keyId } = await connect(account.session, { clientId });
    expect((await keyOf(account.managementKey, keyId))?.name).toBe('Doc Client');
    expect((await rawCall(access)).status).toBe(200);

    const p = pkce();
    const impostor = await authorize(gw(), { response_type: 'code', client_id: `${documentsUrl}/wrong-id.json`, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256' });
    expect(impostor.status).toBe(400);
    expect(impostor.location).toBeNull();
    expect(impostor.text).toContain('another client_id');
  });

  it('refuses a redirect URI not registered exactly (never redirecting to it), and a token request naming another one', async () => {
    const account = await fundedAccount(1);
    const clientId = await newClient();
    const p = pkce();
    for (const wrong of [`${REDIRECT}/`, 'http://127.0.0.1:9/callback?x=1', 'https://attacker.example/callback', undefined]) {
      const answer = await authorize(gw(), { response_type: 'code', client_id: clientId, redirect_uri: wrong, code_challenge: p.challenge, code_challenge_method: 'S256', state: 's' });
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
      expect(answer.text).toContain('redirect_uri');
    }
    const started = await startAuthorization(gw(), clientId, REDIRECT);
    const { code } = codeOf(String((await approve(gw(), account.session, started.requestId)).body.redirect_to));
    const tokens = await exchange(gw(), clientId, code, 'http://127.0.0.1:9/other', started.pkce.verifier);
    expect(tokens.status).toBe(400);
    expect(tokens.body).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri does not match the authorization request' });
  });

  it('before the owner has acted, /oauth/authorize never redirects to the client: every refusal is the platform\'s own page and stores nothing (RFC 9700 section 4.11.2)', async () => {
    const clientId = await newClient();
    const p = pkce();
    const base = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 'st-1', code_challenge: p.challenge, code_challenge_method: 'S256' };
    const cases: [string, Record<string, string | undefined>, string][] = [
      ['no PKCE', { ...base, code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      ['PKCE plain', { ...base, code_challenge: p.verifier, code_challenge_method: 'plain' }, 'invalid_request'],
      ['a challenge without its method', { ...base, code_challenge_method: undefined }, 'invalid_request'],
      ['a challenge that is no SHA-256', { ...base, code_challenge: 'short' }, 'invalid_request'],
      ['another response_type', { ...base, response_type: 'token' }, 'unsupported_response_type'],
      ['a state too long', { ...base, state: 's'.repeat(OAUTH_LIMITS.state.max + 1) }, 'invalid_request'],
      ['another resource', { ...base, resource: 'https://attacker.example/mcp' }, 'invalid_target'],
    ];
    const stored = async (): Promise<number> => Number((await suite.accountsDb.query<{ n: string }>('SELECT count(*) AS n FROM oauth_requests WHERE client_id = $1', [clientId])).rows[0]?.n);
    for (const [name, params, error] of cases) {
      const answer = await authorize(gw(), params);
      expect({ name, status: answer.status, location: answer.location }).toEqual({ name, status: 400, location: null });
      expect(answer.text).toContain(`${error}:`);
      expect(answer.text).not.toContain('attacker.example');
    }
    expect(await stored()).toBe(0);
    // The same client's valid request lands on the platform's consent page, not at the client.
    const valid = await authorize(gw(), base);
    expect(valid.status).toBe(302);
    expect(new URL(valid.location ?? '').origin + new URL(valid.location ?? '').pathname).toBe(gw() + OAUTH_PATHS.consent);
    expect(await stored()).toBe(1);
  });

  it('refuses a code without or with a wrong verifier', async () => {
    const account = await fundedAccount(1);
    const clientId = await newClient();
    const started = await startAuthorization(gw(), clientId, REDIRECT);
    const { code } = codeOf(String((await approve(gw(), account.session, started.requestId)).body.redirect_to));
    expect((await exchange(gw(), clientId, code, REDIRECT, undefined)).body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier is required (PKCE)' });

    const again = await startAuthorization(gw(), clientId, REDIRECT);
    const second = codeOf(String((await approve(gw(), account.session, again.requestId)).body.redirect_to));
    const wrong = await exchange(gw(), clientId, second.code, REDIRECT, pkce().verifier);
    expect(wrong.body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' });
  });

  it('a code is single use (a replay revokes what it gave) and lives at most 60 s', async () => {
    const account = await fundedAccount(1);
    const clientId = await newClient();
    const started = await startAuthorization(gw(), clientId, REDIRECT);
    const approved = await approve(gw(), account.session, started.requestId);
    const { code } = codeOf(String(approved.body.redirect_to));
    const first = await exchange(gw(), clientId, code, REDIRECT, started.pkce.verifier);
    expect(first.status).toBe(200);
    expect((await rawCall(String(first.body.access_token))).status).toBe(200);
    const replay = await exchange(gw(), clientId, code, REDIRECT, started.pkce.verifier);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await rawCall(String(first.body.access_token))).status).toBe(401);
    expect(await keyOf(account.managementKey, String(approved.body.key_id))).toBeUndefined();

    // The code's stored lifetime is the 60 s bound; a code past it is refused.
    const late = await startAuthorization(gw(), clientId, REDIRECT);
    const lateCode = codeOf(String((await approve(gw(), account.session, late.requestId)).body.redirect_to)).code;
    const rows = await suite.accountsDb.query<{ seconds: number }>(`SELECT extract(epoch FROM expires_at - created_at)::float AS seconds FROM oauth_tokens WHERE kind = 'code' ORDER BY created_at DESC LIMIT 1`);
    expect(rows.rows[0]?.seconds).toBe(OAUTH_LIFETIMES.codeSeconds);
    await suite.accountsDb.query(`UPDATE oauth_tokens SET created_at = created_at - interval '61 seconds', expires_at = expires_at - interval '61 seconds' WHERE kind = 'code' AND used_at IS NULL`);
    const expired = await exchange(gw(), clientId, lateCode, REDIRECT, late.pkce.verifier);
    expect(expired.body).toEqual({ error: 'invalid_grant', error_description: 'the code has expired' });
  });

  it('rotates refresh tokens; a rotated one presented again is refused and ends the grant', async () => {
    const account = await fundedAccount(1);
    const first = await connect(account.session);
    const rotated = await refresh(gw(), first.clientId, first.refreshToken);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(first.refreshToken);
    expect((await rawCall(String(rotated.body.access_token))).status).toBe(200);
    const wrongClient = await refresh(gw(), await newClient(), String(rotated.body.refresh_token));
    expect(wrongClient.body.error).toBe('invalid_grant');

    const reuse = await refresh(gw(), first.clientId, first.refreshToken);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: 'the refresh token was already used; the grant is revoked' });
    expect((await refresh(gw(), first.clientId, String(rotated.body.refresh_token))).body.error).toBe('invalid_grant');
    expect((await rawCall(String(rotated.body.access_token))).status).toBe(401);
    expect((await rawCall(first.access)).status).toBe(401);
    const apps = await call('GET', `${gw()}/dashboard/api/connected-apps`, { headers: account.session });
    expect(apps.body.data[0]).toMatchObject({ id: first.grantId, revoked_reason: 'refresh token reused after rotation', key: null });
  });

  it('revocation (RFC 7009): an access token ends alone, a refresh token ends its grant; unknown tokens answer 200', async () => {
    const account = await fundedAccount(1);
    const grant = await connect(account.session);
    const second = await refresh(gw(), grant.clientId, grant.refreshToken);
    const otherAccess = String(second.body.access_token);
    expect((await form(gw(), OAUTH_PATHS.revoke, { token: grant.access, client_id: grant.clientId })).status).toBe(200);
    expect((await rawCall(grant.access)).status).toBe(401);
    expect((await rawCall(otherAccess)).status).toBe(200);
    expect((await form(gw(), OAUTH_PATHS.revoke, { token: String(second.body.refresh_token), client_id: grant.clientId, token_type_hint: 'refresh_token' })).status).toBe(200);
    expect((await rawCall(otherAccess)).status).toBe(401);
    expect((await form(gw(), OAUTH_PATHS.revoke, { token: 'svc-ort-unknown', client_id: grant.clientId })).status).toBe(200);
  });

  it('the owner revokes a connected app, or deletes its key: the next call is 401 within the propagation bound', async () => {
    const account = await fundedAccount(1);
    const viaApp = await connect(account.session);
    expect((await rawCall(viaApp.access)).status).toBe(200);
    const apps = await call('GET', `${gw()}/dashboard/api/connected-apps`, { headers: account.session });
    expect(apps.body.data).toEqual([expect.objectContaining({ id: viaApp.grantId, client_name: 'Test Connector', redirect_host: '127.0.0.1:9', revoked_at: null, key: expect.objectContaining({ id: viaApp.keyId, limit_usd: 1, limit_reset: 'daily' }) })]);
    const revokedAt = Date.now();
    expect((await call('DELETE', `${gw()}/dashboard/api/connected-apps/${viaApp.grantId}`, { headers: account.session })).status).toBe(200);
    await waitFor('the revoked grant\'s token to be refused', async () => ((await rawCall(viaApp.access)).status === 401 ? true : undefined), { timeoutMs: PROPAGATION_MAX_MS });
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(PROPAGATION_MAX_MS);
    expect((await refresh(gw(), viaApp.clientId, viaApp.refreshToken)).body.error).toBe('invalid_grant');

    const viaKey = await connect(account.session);
    expect((await rawCall(viaKey.access)).status).toBe(200);
    const deletedAt = Date.now();
    expect((await call('DELETE', `${gw()}/v1/keys/${viaKey.keyId}`, { headers: bearer(account.managementKey) })).status).toBe(200);
    await waitFor('the deleted key\'s token to be refused', async () => ((await rawCall(viaKey.access)).status === 401 ? true : undefined), { timeoutMs: PROPAGATION_MAX_MS + 2_000, intervalMs: 200 });
    expect(Date.now() - deletedAt).toBeLessThanOrEqual(PROPAGATION_MAX_MS);
    expect((await refresh(gw(), viaKey.clientId, viaKey.refreshToken)).body.error).toBe('invalid_grant');
  }, 60_000);

  it('consent needs the session\'s own CSRF token; a management key or another account\'s session cannot approve for the account', async () => {
    const owner = await fundedAccount(1);
    const other = await fundedAccount(1);
    const clientId = await newClient();
    const started = await startAuthorization(gw(), clientId, REDIRECT);
    const consent = { limit_usd: 1, limit_reset: 'daily', expires_at: null };
    const url = `${gw()}/dashboard/api/oauth/requests/${started.requestId}/approve`;

    const noCsrf = await call('POST', url, { body: consent, headers: { cookie: owner.session.cookie ?? '' } });
    expect(noCsrf.status).toBe(400);
    expect(noCsrf.body.error.message).toBe('missing or wrong x-csrf-token');
    const othersCsrf = await call('POST', url, { body: consent, headers: { cookie: other.session.cookie ?? '', 'x-csrf-token': owner.session['x-csrf-token'] ?? '' } });
    expect(othersCsrf.status).toBe(400);
    const managementKey = await call('POST', url, { body: consent, headers: bearer(owner.managementKey) });
    expect(managementKey.status).toBe(401);
    expect((await call('POST', `${gw()}/v1/oauth/requests/${started.requestId}/approve`, { body: consent, headers: bearer(owner.managementKey) })).status).toBe(404);
    const ownersKeys = (await call('GET', `${gw()}/v1/keys`, { headers: bearer(owner.managementKey) })).body.data as unknown[];
    expect(ownersKeys).toEqual([]);

    // The request is still pending: the owner's own session approves it once.
    const view = await call('GET', `${gw()}/dashboard/api/oauth/requests/${started.requestId}`, { headers: owner.session });
    expect(view.body).toMatchObject({ client_id: clientId, client_name: 'Test Connector', redirect_host: '127.0.0.1:9', client_kind: 'dynamic' });
    expect((await approve(gw(), owner.session, started.requestId, consent)).status).toBe(200);
    expect((await approve(gw(), owner.session, started.requestId, consent)).status).toBe(404);
    // Another account cannot see or end the owner's connected app.
    const grants = (await call('GET', `${gw()}/dashboard/api/connected-apps`, { headers: owner.session })).body.data as { id: string }[];
    expect((await call('DELETE', `${gw()}/dashboard/api/connected-apps/${grants[0]?.id}`, { headers: other.session })).status).toBe(404);
    expect((await call('GET', `${gw()}/dashboard/api/connected-apps`, { headers: other.session })).body.data).toEqual([]);
  });

  it('a denial goes back to the client with access_denied and the state; a denied request cannot be approved', async () => {
    const account = await fundedAccount(1);
    const clientId = await newClient();
    const started = await startAuthorization(gw(), clientId, REDIRECT, 'deny-state');
    const denied = await call('POST', `${gw()}/dashboard/api/oauth/requests/${started.requestId}/deny`, { headers: account.session });
    expect(denied.status).toBe(200);
    const back = new URL(String(denied.body.redirect_to));
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('deny-state');
    expect((await approve(gw(), account.session, started.requestId)).status).toBe(404);
    expect(requestIdOf(started.location)).toBe(started.requestId);
  });

  it('tokens and codes are stored only as hashes and never logged', async () => {
    const account = await fundedAccount(1);
    const grant = await connect(account.session);
    const stored = await suite.accountsDb.query<{ hash: string }>('SELECT hash FROM oauth_tokens');
    const hashes = stored.rows.map((row) => row.hash);
    expect(hashes.every((hash) => /^[0-9a-f]{64}$/.test(hash))).toBe(true);
    const dump = JSON.stringify((await suite.accountsDb.query('SELECT * FROM oauth_tokens')).rows) + JSON.stringify((await suite.accountsDb.query('SELECT * FROM oauth_grants')).rows);
    for (const secret of [grant.access, grant.refreshToken]) {
      expect(dump).not.toContain(secret);
      expect(suite.stack.logs()).not.toContain(secret);
      expect(suite.stack.logs()).not.toContain(secret.slice(8));
    }
  });
});
