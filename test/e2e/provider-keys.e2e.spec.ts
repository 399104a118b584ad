import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encryptProviderKey, providerKeyLabel } from '@svc/keys';
import { bearer, call, dumpDatabase, dumpRedis, newAccount, newApiKey, repoRoot, waitFor, grantCredits, useStack } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * Provider keys (BYOK) end to end, through the gateway's HTTP edge, with every service its own
 * process: the /v1 and dashboard rules, searches with the account's key (fee, fallback to the
 * platform key after a rejected key), a gateway without a platform key for Brave, a KEK
 * rotation with the rewrap command, and a search of PostgreSQL, Redis and every log for the
 * plaintext of every key stored.
 */
const run = promisify(execFile);
const own = (tag: string): string => `own-${tag}-${randomBytes(12).toString('hex')}`;
// Keys the simulator accepts besides the platform's (an account's own keys)...
const EXA_OWN = own('exa');
const BRAVE_OWN = own('brave');
// ... and one it does not know (the provider rejects it).
const TAVILY_REJECTED = own('tavily');
const OLD_KEK = { id: 'kek-old', key: randomBytes(32).toString('base64') };
const NEW_KEK = { id: 'kek-new', key: randomBytes(32).toString('base64') };

describe('provider keys (BYOK)', () => {
  const plaintexts: string[] = [EXA_OWN, BRAVE_OWN, TAVILY_REJECTED];
  const previous = `${OLD_KEK.id}:${OLD_KEK.key}`;
  // LOG_LEVEL debug (the default): the last test looks for every plaintext in everything the services logged.
  const suite = useStack({
    name: 'byok',
    redisDb: 12,
    simulator: true,
    worker: true,
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100' },
    simulatorEnv: { SIM_EXA_KEY: `sim-exa-key,${EXA_OWN}`, SIM_BRAVE_KEY: `sim-brave-key,${BRAVE_OWN}` },
    kek: NEW_KEK,
    accountAdminEnv: { PROVIDER_KEY_KEK_PREVIOUS: previous },
    gatewayEnv: { PROVIDER_KEY_KEK_PREVIOUS: previous },
    // Gateway 1 has no platform key for Brave; gateway 2 hears no change message (every one lost).
    gateways: [{}, { env: { BRAVE_API_KEY: '' } }, { env: { KEY_CHANGES_SUBSCRIBE: 'false' } }],
  }, { db: true, accountsDb: true });

  async function fundedAccount(usd: number): Promise<Awaited<ReturnType<typeof newAccount>> & { apiKey: string }> {
    const account = await newAccount(suite.gw, 'byok');
    await grantCredits(suite.stack, account.accountId, usd * 1_000_000, { redis: suite.redis });
    const apiKey = await newApiKey(suite.gw, account.managementKey);
    return { ...account, apiKey: apiKey.secret };
  }

  const put = (base: string, secret: string, provider: string, body: unknown): Promise<JsonResponse> =>
    call('PUT', `${base}/v1/provider-keys/${provider}`, { body, headers: bearer(secret) });

  describe('/v1/provider-keys', () => {
    it('applies every rule through HTTP', async () => {
      const account = await fundedAccount(1);
      const mk = account.managementKey;
      // Authentication and key kind.
      expect((await call('GET', `${suite.gw}/v1/provider-keys`)).body.error.code).toBe('invalid_api_key');
      const wrongKind = await put(suite.gw, account.apiKey, 'exa', { key: EXA_OWN });
      expect([wrongKind.status, wrongKind.body.error.code]).toEqual([403, 'wrong_key_type']);
      // Unknown provider, on every method.
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const reply = await call(method, `${suite.gw}/v1/provider-keys/google`, { body: method === 'PUT' ? { key: EXA_OWN } : undefined, headers: bearer(mk) });
        expect([reply.status, reply.body.error.code]).toEqual([400, 'unknown_provider']);
      }
      // Nothing stored yet.
      expect((await call('GET', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(mk) })).body.error.code).toBe('not_found');
      expect((await call('DELETE', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(mk) })).status).toBe(404);
      expect((await call('GET', `${suite.gw}/v1/provider-keys`, { headers: bearer(mk) })).body.data).toEqual([]);
      // Bad bodies: missing, empty, non-string, oversized key, unknown field, not JSON.
      const bad: [unknown, RegExp][] = [
        [{}, /key/], [{ key: '' }, /key/], [{ key: 42 }, /key must be a string/], [{ key: null }, /key/],
        [{ key: 'k'.repeat(513) }, /key must be 1 to 512/], [{ key: 'has space' }, /key/],
        [{ key: EXA_OWN, extra: 1 }, /unknown field "extra"/],
      ];
      for (const [body, message] of bad) {
        const reply = await put(suite.gw, mk, 'exa', body);
        expect([reply.status, reply.body.error.code]).toEqual([400, 'invalid_request']);
        expect(reply.body.error.message).toMatch(message);
        expect(reply.text).not.toContain(EXA_OWN);
      }
      const notJson = await call('PUT', `${suite.gw}/v1/provider-keys/exa`, { raw: '{"key":', headers: bearer(mk) });
      expect([notJson.status, notJson.body.error.code]).toEqual([400, 'invalid_request']);
      expect((await call('GET', `${suite.gw}/v1/provider-keys`, { headers: bearer(mk) })).body.data).toEqual([]);

      // Store, read, list, replace, delete.
      const stored = await put(suite.gw, mk, 'exa', { key: EXA_OWN });
      expect(stored.status).toBe(200);
      expect(Object.keys(stored.body).sort()).toEqual(['created_at', 'label', 'provider', 'request_id', 'updated_at']);
      expect(stored.body).toMatchObject({ provider: 'exa', label: `…${EXA_OWN.slice(-4)}` });
      expect(stored.text).not.toContain(EXA_OWN);
      const one = await call('GET', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(mk) });
      expect(one.body).toMatchObject({ provider: 'exa', label: stored.body.label, created_at: stored.body.created_at });
      const replacement = own('exa2');
      const replaced = await put(suite.gw, mk, 'exa', { key: replacement });
      expect(replaced.status).toBe(200);
      expect(replaced.body.created_at).toBe(stored.body.created_at);
      expect(replaced.body.label).toBe(providerKeyLabel(replacement));
      expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(stored.body.updated_at));
      const list = await call('GET', `${suite.gw}/v1/provider-keys`, { headers: bearer(mk) });
      expect(list.body.data).toEqual([{ provider: 'exa', label: replaced.body.label, created_at: replaced.body.created_at, updated_at: replaced.body.updated_at }]);
      const deleted = await call('DELETE', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(mk) });
      expect([deleted.status, deleted.body.provider, deleted.body.deleted]).toEqual([200, 'exa', true]);
      expect((await call('GET', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(mk) })).status).toBe(404);
      plaintexts.push(replacement);
    });
  });

  describe('/dashboard/api/provider-keys', () => {
    it('mirrors /v1 with the session, and needs x-csrf-token on changes', async () => {
      const account = await newAccount(suite.gw, 'byok-dash');
      const cookieOnly = { cookie: account.session.cookie };
      const url = `${suite.gw}/dashboard/api/provider-keys`;
      expect((await call('GET', url)).status).toBe(401);
      const noCsrf = await call('PUT', `${url}/tavily`, { body: { key: TAVILY_REJECTED }, headers: cookieOnly });
      expect([noCsrf.status, noCsrf.body.error.code]).toEqual([400, 'invalid_request']);
      expect((await call('GET', url, { headers: cookieOnly })).body.data).toEqual([]);
      const unknown = await call('PUT', `${url}/google`, { body: { key: TAVILY_REJECTED }, headers: account.session });
      expect([unknown.status, unknown.body.error.code]).toEqual([400, 'unknown_provider']);
      const extra = await call('PUT', `${url}/tavily`, { body: { key: TAVILY_REJECTED, note: 'x' }, headers: account.session });
      expect([extra.status, extra.body.error.message]).toEqual([400, 'unknown field "note"']);
      const empty = await call('PUT', `${url}/tavily`, { body: { key: '' }, headers: account.session });
      expect([empty.status, empty.body.error.code]).toEqual([400, 'invalid_request']);
      const stored = await call('PUT', `${url}/tavily`, { body: { key: TAVILY_REJECTED }, headers: account.session });
      expect(stored.status).toBe(200);
      expect(stored.body).toMatchObject({ provider: 'tavily', label: `…${TAVILY_REJECTED.slice(-4)}` });
      expect(stored.text).not.toContain(TAVILY_REJECTED);
      expect((await call('GET', `${url}/tavily`, { headers: cookieOnly })).body.label).toBe(stored.body.label);
      // The same record through /v1 with the account's management key.
      expect((await call('GET', `${suite.gw}/v1/provider-keys`, { headers: bearer(account.managementKey) })).body.data).toHaveLength(1);
      expect((await call('DELETE', `${url}/tavily`, { headers: cookieOnly })).status).toBe(400);
      const deleted = await call('DELETE', `${url}/tavily`, { headers: account.session });
      expect([deleted.status, deleted.body.deleted]).toEqual([200, true]);
      expect((await call('GET', `${url}/tavily`, { headers: cookieOnly })).body.error.code).toBe('not_found');
      expect((await call('DELETE', `${url}/tavily`, { headers: account.session })).status).toBe(404);
    });
  });

  describe('searches', () => {
    const search = (base: string, secret: string, body: Record<string, unknown>): Promise<JsonResponse> =>
      call('POST', `${base}/v1/search`, { body: { max_results: 10, ...body }, headers: bearer(secret) });

    it('answers with the account key (source byok, charged the fee), falls back to the platform after a rejected key, and charges exactly', async () => {
      const account = await fundedAccount(1);
      const mk = account.managementKey;
      // Before any key: platform, full price (exa/fast at 10 results: 9,000 micro-USD).
      const platform = await search(suite.gw, account.apiKey, { query: 'byok before', model: 'exa/fast' });
      expect([platform.status, platform.body.source, platform.body.cost_usd]).toEqual([200, 'platform', 0.009]);
      // Stored through gateway 0: applies on its next search at once.
      expect((await put(suite.gw, mk, 'exa', { key: EXA_OWN })).status).toBe(200);
      const byok = await search(suite.gw, account.apiKey, { query: 'byok after', model: 'exa/fast' });
      expect([byok.status, byok.body.source, byok.body.attempts]).toEqual([200, 'byok', []]);
      // 5 % of 9,000 micro-USD.
      expect(byok.body.cost_usd).toBe(0.00045);
      // The simulator rejects the account's Tavily key: a failed byok attempt, then the platform's.
      expect((await put(suite.gw, mk, 'tavily', { key: TAVILY_REJECTED })).status).toBe(200);
      const fallback = await search(suite.gw, account.apiKey, { query: 'byok rejected', model: 'tavily/basic' });
      expect(fallback.status).toBe(200);
      expect(fallback.body.source).toBe('platform');
      expect(fallback.body.cost_usd).toBe(0.01);
      expect(fallback.body.attempts).toHaveLength(1);
      expect(fallback.body.attempts[0]).toMatchObject({ model: 'tavily/basic', source: 'byok', status: 'error' });
      expect(fallback.text).not.toContain(TAVILY_REJECTED);
      // A byok attempt that fails is followed by the platform's on the same model; both fail here, so the next model answers.
      const timedOut = await search(suite.gw, account.apiKey, { query: 'byok slow sim:exa=error500', models: ['exa/fast', 'brave/web'] });
      expect(timedOut.status).toBe(200);
      expect(timedOut.body.attempts.map((a: { source: string }) => a.source)).toEqual(['byok', 'platform']);
      expect(timedOut.body).toMatchObject({ model: 'brave/web', source: 'platform', cost_usd: 0.006 });
      // Deleted through gateway 0: the platform key again at once.
      expect((await call('DELETE', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(mk) })).status).toBe(200);
      const after = await search(suite.gw, account.apiKey, { query: 'byok deleted', model: 'exa/fast' });
      expect([after.body.source, after.body.cost_usd]).toEqual(['platform', 0.009]);

      // Exact money: the ledger holds what the answers said, BYOK fees told apart by the attempts' source.
      const expected = [0.009, 0.00045, 0.01, 0.006, 0.009].reduce((sum, usd) => sum + Math.round(usd * 1_000_000), 0);
      const ledger = await waitFor('the worker to write the five searches', async () => {
        const rows = await suite.db.query<{ kind: string; n: string; sum: string }>(
          `SELECT kind, count(*) AS n, sum(-amount_micros) AS sum FROM ledger_entries WHERE account_id = $1 AND kind <> 'grant' GROUP BY kind ORDER BY kind::text`, [account.accountId]);
        return rows.rows.reduce((n, r) => n + Number(r.n), 0) >= 5 ? rows.rows.map((r) => [r.kind, Number(r.n), Number(r.sum)]) : undefined;
      }, { timeoutMs: 30_000 });
      // The BYOK fee is its own ledger entry kind; platform charges stay search_charge.
      expect(ledger).toEqual([['byok_fee', 1, 450], ['search_charge', 4, expected - 450]]);
      const usage = await call('GET', `${suite.gw}/v1/usage?group_by=model`, { headers: bearer(mk) });
      expect(usage.body.total).toMatchObject({ searches: 5, byok_fee_usd: 0.00045 });
      expect(Math.round(usage.body.total.cost_usd * 1_000_000)).toBe(expected);
      const exaRow = usage.body.data.find((row: { model: string }) => row.model === 'exa/fast');
      expect(exaRow).toMatchObject({ byok_fee_usd: 0.00045 });
      const finance = await call('GET', `${suite.stack.billing.operatorUrl}/operator/finance/reconciliation`, { headers: bearer(suite.stack.operatorToken) });
      expect(finance.body.usage).toMatchObject({ byok_drift_usd: 0, entries_drift_usd: 0, events_drift_usd: 0, mismatched_requests: [], key_spend_drift_usd: 0 });
      expect(finance.body.usage.byok_fee_entries.amount_usd).toBeGreaterThanOrEqual(0.00045);
      const bySource = await suite.db.query<{ source: string; charged: string }>(
        `SELECT source, sum(charged_micros) AS charged FROM usage_events WHERE account_id = $1 GROUP BY source ORDER BY source`, [account.accountId]);
      expect(bySource.rows.map((r) => [r.source, Number(r.charged)])).toEqual([['byok', 450], ['platform', expected - 450]]);
      const credits = await call('GET', `${suite.gw}/v1/credits`, { headers: bearer(account.apiKey) });
      expect(Math.round(credits.body.balance_usd * 1_000_000)).toBe(1_000_000 - expected);
    });

    it('a gateway without a platform Brave key: skipped "not configured", available false, and the account key serves', async () => {
      const models = await call('GET', `${suite.gateway(1)}/v1/models`);
      for (const model of models.body.data as { id: string; provider: string; available: boolean }[]) {
        expect(model.available).toBe(model.provider !== 'brave');
      }
      expect((await call('GET', `${suite.gw}/v1/models`)).body.data.every((m: { available: boolean }) => m.available)).toBe(true);
      const account = await fundedAccount(1);
      const skipped = await search(suite.gateway(1), account.apiKey, { query: 'no brave', model: 'brave/web' });
      expect([skipped.status, skipped.body.error.code]).toEqual([502, 'all_providers_failed']);
      expect(skipped.body.error.attempts).toEqual([{ model: 'brave/web', status: 'skipped', error: 'provider not configured' }]);
      const fallsOn = await search(suite.gateway(1), account.apiKey, { query: 'no brave then exa', models: ['brave/web', 'exa/fast'] });
      expect(fallsOn.body).toMatchObject({ model: 'exa/fast', source: 'platform', attempts: [{ model: 'brave/web', status: 'skipped', error: 'provider not configured' }] });
      // Stored through gateway 0; gateway 1 learns it by pub/sub (or within its cache lifetime).
      expect((await put(suite.gw, account.managementKey, 'brave', { key: BRAVE_OWN })).status).toBe(200);
      const served = await waitFor('gateway 1 to use the stored Brave key', async () => {
        const reply = await search(suite.gateway(1), account.apiKey, { query: 'brave own', model: 'brave/web' });
        return reply.status === 200 ? reply : undefined;
      }, { timeoutMs: 15_000, intervalMs: 200 });
      expect(served.body).toMatchObject({ source: 'byok', attempts: [], cost_usd: 0.0003 });
      // A rejected own key on a provider the deployment lacks: the byok error, and nothing after it.
      expect((await call('DELETE', `${suite.gw}/v1/provider-keys/brave`, { headers: bearer(account.managementKey) })).status).toBe(200);
    });

    it('a change reaches a gateway that lost every change message within the propagation bound (15 s)', async () => {
      const deaf = suite.gateway(2);
      const account = await fundedAccount(1);
      const probe = (): Promise<JsonResponse> => search(deaf, account.apiKey, { query: 'deaf gateway', model: 'exa/fast' });
      expect((await probe()).body.source).toBe('platform');
      for (const [change, expected] of [['store', 'byok'], ['delete', 'platform']] as const) {
        const at = Date.now();
        const reply = change === 'store'
          ? await put(suite.gw, account.managementKey, 'exa', { key: EXA_OWN })
          : await call('DELETE', `${suite.gw}/v1/provider-keys/exa`, { headers: bearer(account.managementKey) });
        expect(reply.status).toBe(200);
        await waitFor(`the deaf gateway to see the ${change}`, async () => ((await probe()).body.source === expected ? true : undefined), { timeoutMs: 20_000, intervalMs: 100 });
        // Within KEY_PROPAGATION_MAX_MS of the change (the copy lives KEY_CACHE_TTL_MS, 5 s, at most).
        expect([change, Date.now() - at <= 15_000]).toEqual([change, true]);
      }
    }, 60_000);

    it('a KEK rotation: records under the previous KEK keep working, the rewrap command moves every one, and no plaintext is stored or logged anywhere', async () => {
      const account = await fundedAccount(1);
      // A record written before the rotation: wrapped by the old KEK.
      const oldRing = { current: { id: OLD_KEK.id, key: Buffer.from(OLD_KEK.key, 'base64') }, previous: null };
      const envelope = encryptProviderKey(oldRing, account.accountId, 'exa', EXA_OWN);
      await suite.accountsDb.query(
        `INSERT INTO provider_keys (account_id, provider, kek_id, wrapped_key, ciphertext, label, created_at, updated_at)
         VALUES ($1, 'exa', $2, $3, $4, $5, now(), now())`,
        [account.accountId, envelope.kekId, envelope.wrappedKey, envelope.ciphertext, providerKeyLabel(EXA_OWN)]);
      const before = await waitFor('the gateway to read the old-KEK record', async () => {
        const reply = await search(suite.gw, account.apiKey, { query: 'rotation before', model: 'exa/fast' });
        return reply.body.source === 'byok' ? reply : undefined;
      }, { timeoutMs: 15_000, intervalMs: 250 });
      expect(before.status).toBe(200);
      // The operator's command, with the services' rotation environment.
      const { stdout } = await run(process.execPath, [join(repoRoot(), 'services/account-admin/dist/provider-keys/rewrap-cli.js')], {
        env: { ...process.env, DATABASE_URL: suite.stack.databases.accountAdmin, PROVIDER_KEY_KEK: NEW_KEK.key, PROVIDER_KEY_KEK_ID: NEW_KEK.id, PROVIDER_KEY_KEK_PREVIOUS: `${OLD_KEK.id}:${OLD_KEK.key}` },
      });
      const result = JSON.parse(stdout) as { rewrapped: number; remaining: unknown[] };
      expect(result.rewrapped).toBeGreaterThanOrEqual(1);
      expect(result.remaining).toEqual([]);
      const kekIds = await suite.accountsDb.query<{ kek_id: string }>('SELECT DISTINCT kek_id FROM provider_keys');
      expect(kekIds.rows.map((r) => r.kek_id)).toEqual([NEW_KEK.id]);
      // The gateway's copy is dropped on the next change or after its lifetime; either way it still opens it.
      await call('PUT', `${suite.gw}/v1/provider-keys/tavily`, { body: { key: TAVILY_REJECTED }, headers: bearer(account.managementKey) });
      const after = await search(suite.gw, account.apiKey, { query: 'rotation after', model: 'exa/fast' });
      expect([after.status, after.body.source]).toEqual([200, 'byok']);
      await call('DELETE', `${suite.gw}/v1/provider-keys/tavily`, { headers: bearer(account.managementKey) });

      // Let the worker drain, then look for every plaintext everywhere.
      await waitFor('the settlement streams to drain', async () => ((await suite.redis.scard('svc:settle:dirty')) === 0 ? true : undefined), { timeoutMs: 20_000 });
      const haystacks: [string, string][] = [
        ['postgres account-admin', await dumpDatabase(suite.stack.databases.accountAdmin)],
        ['postgres billing', await dumpDatabase(suite.stack.databases.billing)],
        ['redis', await dumpRedis(suite.redis)],
        ['service logs', suite.stack.logs()],
      ];
      expect(haystacks.some(([, text]) => text.includes(account.accountId))).toBe(true);
      for (const plaintext of plaintexts) {
        for (const [where, text] of haystacks) {
          expect([where, text.includes(plaintext)]).toEqual([where, false]);
        }
      }
    });
  });
});
