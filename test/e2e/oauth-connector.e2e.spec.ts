import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client as McpClient, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { CallToolResult, OAuthClientProvider } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { OAUTH_PATHS, redisKeys } from '@svc/contracts';
import { bearer, call, repoRoot, waitFor, useStack, SETTLING_STACK } from '@svc/test-kit';
import { useChromium } from './chromium';

/**
 * The connector journey of a chat app, end to end: the official MCP SDK client's own OAuth
 * (discovery from the 401's resource_metadata, dynamic registration, PKCE, the token
 * exchange) against the real stack, and the owner in Chromium (signing in on the consent
 * page, approving with a $1 daily limit, later revoking on the Connected apps page).
 */
const PASSWORD = 'a long enough password';
const PROPAGATION_MAX_MS = 15_000;
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = join(repoRoot(), 'test/e2e/screenshots');

/**
 * The page at desktop and phone width, as the dashboard suite checks its pages: a screenshot,
 * no horizontal overflow, no serious or critical axe-core violation. Answers the problems.
 */
async function pageProblems(page: Page, name: string): Promise<string[]> {
  const problems: string[] = [];
  mkdirSync(SHOTS, { recursive: true });
  for (const [size, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 375, height: 812 }]] as const) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(SHOTS, `dashboard-${name}-${size}.png`), fullPage: true });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    if (overflow > 0) problems.push(`${name} at ${size}: ${overflow}px wider than the screen`);
    if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate<{ id: string; impact: string | null }[]>(
      "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact })))");
    for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`${name} at ${size}: ${v.impact} ${v.id}`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  return problems;
}

type Provided = Parameters<OAuthClientProvider['saveTokens']>[0];
type ClientInfo = Parameters<NonNullable<OAuthClientProvider['saveClientInformation']>>[0];
type Discovery = Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0];

/** What a chat app keeps: its registration, the PKCE verifier and the tokens (in memory here). */
class ChatAppProvider implements OAuthClientProvider {
  info: ClientInfo | undefined;
  saved: Provided | undefined;
  verifier = '';
  discovery: Discovery | undefined;
  authorizationUrl: URL | null = null;

  constructor(private readonly callback: string) {}

  get redirectUrl(): string {
    return this.callback;
  }

  get clientMetadata(): OAuthClientProvider['clientMetadata'] {
    return { client_name: 'Chat Connector', redirect_uris: [this.callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }

  clientInformation(): ClientInfo | undefined {
    return this.info;
  }

  saveClientInformation(info: ClientInfo): void {
    this.info = info;
  }

  tokens(): Provided | undefined {
    return this.saved;
  }

  saveTokens(tokens: Provided): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** Kept with the verifier, so the SDK checks the callback against the authorization server it discovered. */
  saveDiscoveryState(state: Discovery): void {
    this.discovery = state;
  }

  discoveryState(): Discovery | undefined {
    return this.discovery;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}

describe('a chat-app connector over OAuth, with the owner in Chromium', () => {
  let callbackServer: Server;
  let callbackUrl: string;
  const callbacks: URLSearchParams[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
  });
  const browser = useChromium('svc-oauth-chromium-');
  afterAll(() => new Promise((resolve) => callbackServer?.close(resolve)));
  const suite = useStack({ ...SETTLING_STACK, name: 'oauth_connector', redisDb: 14 });

  beforeAll(async () => {
    // The chat app's redirect URI: records where the browser comes back with the code.
    callbackServer = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://x');
      // The browser also asks for /favicon.ico.
      if (url.pathname === '/callback') callbacks.push(url.searchParams);
      response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Connected</title><h1>Connected</h1>');
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
  });

  async function connectedClient(provider: ChatAppProvider): Promise<McpClient> {
    const transport = new StreamableHTTPClientTransport(new URL(suite.gw + OAUTH_PATHS.resource), { authProvider: provider });
    const client = new McpClient({ name: 'chat-app', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport);
    closers.push(() => client.close());
    return client;
  }

  it('registers, the owner signs in and approves a $1 daily limit, web_search is charged to the grant key, the limit holds, and revoking ends it within the propagation bound', async () => {
    // The owner's account, funded with $5.
    const email = `owner-${Date.now()}@example.com`;
    const signup = await call('POST', `${suite.gw}/dashboard/api/signup`, { body: { email, password: PASSWORD } });
    expect(signup.status).toBe(201);
    const accountId = String(signup.body.account_id);
    const session = { cookie: (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? '', 'x-csrf-token': String(signup.body.csrf_token) };
    const managementKey = String((await call('POST', `${suite.gw}/dashboard/api/management-keys`, { body: { name: 'owner' }, headers: session })).body.secret);
    expect((await call('POST', `${suite.stack.billing.operatorUrl}/operator/accounts/${accountId}/grants`, { body: { amount_usd: 5, reason: 'e2e' }, headers: bearer(suite.stack.operatorToken) })).status).toBe(201);
    await waitFor('the funding', async () => ((await suite.redis.get(redisKeys.accountBalance(accountId))) === '5000000' ? true : undefined));

    // The chat app connects: the SDK discovers, registers and asks the owner to authorize.
    const provider = new ChatAppProvider(callbackUrl);
    const transport = new StreamableHTTPClientTransport(new URL(suite.gw + OAUTH_PATHS.resource), { authProvider: provider });
    const first = new McpClient({ name: 'chat-app', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toMatch(/^ocl_/);
    expect(provider.discovery?.authorizationServerUrl).toBe(suite.gw);
    const authorizationUrl = provider.authorizationUrl;
    if (authorizationUrl === null) throw new Error('the SDK did not ask for authorization');
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(suite.gw + OAUTH_PATHS.authorize);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(suite.gw + OAUTH_PATHS.resource);

    // The owner, in the browser: the consent page asks to sign in first, then shows the app.
    const page = await browser.context.newPage();
    await page.goto(authorizationUrl.toString());
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(OAUTH_PATHS.consent);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connect an app' }).waitFor();
    expect(await page.locator('.client-name').textContent()).toBe('Chat Connector');
    expect(await page.locator('.redirect-host').textContent()).toBe(new URL(callbackUrl).host);
    expect(await pageProblems(page, 'consent')).toEqual([]);
    await page.getByLabel('Spending limit (USD)').fill('1');
    await page.getByLabel('Limit resets').selectOption('daily');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((url) => url.toString().startsWith(callbackUrl));
    const back = callbacks.at(-1);
    if (back === undefined) throw new Error('the browser did not come back to the app');
    expect(back.get('state')).toBe(authorizationUrl.searchParams.get('state'));
    expect(back.get('iss')).toBe(suite.gw);
    await transport.finishAuth(back);
    expect(provider.saved?.access_token).toMatch(/^svc-oat-/);

    // The grant is a child key of the account, named after the app, with the limit chosen.
    const keys = (await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(managementKey) })).body.data as { id: string; name: string; limit_usd: number; limit_reset: string; usage_usd: number }[];
    expect(keys).toEqual([expect.objectContaining({ name: 'Chat Connector', limit_usd: 1, limit_reset: 'daily', usage_usd: 0 })]);
    const grantKeyId = keys[0]?.id ?? '';

    // web_search with the access token, charged to the grant's key.
    const client = await connectedClient(provider);
    const balance = async (): Promise<number> => Number(await suite.redis.get(redisKeys.accountBalance(accountId)));
    const before = await balance();
    const answer = (await client.callTool({ name: 'web_search', arguments: { query: 'connector search', model: 'exa/fast', max_results: 3, idempotency_key: 'connector-1' } })) as CallToolResult;
    expect(answer.isError).toBeFalsy();
    const cost = (answer.structuredContent as { cost_usd: number }).cost_usd;
    expect(before - (await balance())).toBe(Math.round(cost * 1_000_000));
    const keyUsage = async (): Promise<number> =>
      ((await call('GET', `${suite.gw}/v1/keys/${grantKeyId}`, { headers: bearer(managementKey) })).body as { usage_usd: number }).usage_usd;
    expect(await keyUsage()).toBe(cost);

    // The $1 daily limit: expensive searches until the key's limit refuses one.
    let refusal: { code: string } | null = null;
    for (let i = 0; i < 20 && refusal === null; i++) {
      const result = (await client.callTool({ name: 'web_search', arguments: { query: `deep ${i}`, model: 'exa/deep', max_results: 100 } })) as CallToolResult;
      if (result.isError === true) refusal = (JSON.parse((result.content[1] as { text: string }).text) as { error: { code: string } }).error;
    }
    expect(refusal).toEqual(expect.objectContaining({ code: 'key_limit_exceeded' }));
    const spent = await keyUsage();
    expect(spent).toBeLessThanOrEqual(1);
    expect(spent).toBeGreaterThan(0.8);
    expect(5_000_000 - (await balance())).toBe(Math.round(spent * 1_000_000));

    // The Connected apps page shows the app and its spend; the owner revokes it there.
    await page.goto(`${suite.gw}/dashboard/connected-apps`);
    await page.getByRole('heading', { level: 1, name: 'Connected apps' }).waitFor();
    const row = page.locator('tr', { hasText: 'Chat Connector' });
    await row.waitFor();
    expect(await row.locator('.spend-text').textContent()).toContain('of $1.00 per day');
    expect(await pageProblems(page, 'connected-apps')).toEqual([]);
    await row.getByRole('button', { name: 'Revoke Chat Connector' }).click();
    const revokedAt = Date.now();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await row.locator('.status', { hasText: 'Revoked' }).waitFor();

    const token = provider.saved?.access_token ?? '';
    const status = async (): Promise<number> =>
      (await call('POST', suite.gw + OAUTH_PATHS.resource, { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream', ...bearer(token) } })).status;
    await waitFor('the revoked connector to be refused', async () => ((await status()) === 401 ? true : undefined), { timeoutMs: PROPAGATION_MAX_MS });
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(PROPAGATION_MAX_MS);
    const refused = (await client.callTool({ name: 'list_models', arguments: {} }).then(() => null, (error: unknown) => error)) as Error | null;
    expect(refused).not.toBeNull();
    expect((await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(managementKey) })).body.data).toEqual([]);
  }, 120_000);

  it('on a stack without the local setting, a client metadata document on a loopback or private address is never fetched', async () => {
    let fetched = 0;
    const site = createServer((_request, response) => {
      fetched++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const port = (site.address() as AddressInfo).port;
    try {
      for (const clientId of [`http://127.0.0.1:${port}/client.json`, `https://127.0.0.1:${port}/client.json`, `https://localhost:${port}/client.json`, 'https://169.254.169.254/latest/meta-data']) {
        const url = new URL(suite.gw + OAUTH_PATHS.authorize);
        for (const [name, value] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: callbackUrl, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })) url.searchParams.set(name, value);
        const answer = await fetch(url, { redirect: 'manual' });
        expect({ clientId, status: answer.status, location: answer.headers.get('location') }).toEqual({ clientId, status: 400, location: null });
      }
      expect(fetched).toBe(0);
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });
});
