import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { SearchGateway, SearchGatewayError } from '@svc/sdk';
import type { Provider } from '@svc/sdk';
import { freePort, newAccount, repoRoot, waitFor, grantCredits, SETTLING_STACK } from '@svc/test-kit';
import { useStripeStack } from './stripe-stack';

/**
 * The reference SDK (`@svc/sdk`) and the `svc` CLI (its built bin, run as a process) against
 * the real local stack: the gateway, account-admin, billing, the ledger worker and the
 * provider simulator as separate processes, checkout through a fake Stripe. The simulator's
 * `sim:exa=error500` directive in a query makes Exa fail, so a search falls back.
 */
const STRIPE_KEY = 'sk_test_fake_sdk';
const WEBHOOK_SECRET = 'whsec_fake_sdk';
const CLI = join(repoRoot(), 'packages/sdk/dist/cli.js');

interface CliRun { code: number | null; stdout: string; stderr: string }

describe('the SDK and the svc CLI against the local stack', () => {
  const suite = useStripeStack({ secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET }, (stripe) => ({
    ...SETTLING_STACK,
    name: 'sdk',
    redisDb: 11,
    billingEnv: stripe.billingEnv(2000),
  }));

  /** A new account with `usd` of credits granted by the operator, and its management key. */
  async function fundedAccount(label: string, usd: number): Promise<{ accountId: string; managementKey: string }> {
    const account = await newAccount(suite.gw, label);
    await grantCredits(suite.stack, account.accountId, Math.round(usd * 1_000_000), { reason: 'sdk e2e' });
    const admin = new SearchGateway({ baseUrl: suite.gw, managementKey: account.managementKey });
    await waitFor('the grant in the balance', async () => ((await admin.credits()).balance_usd === usd ? true : undefined));
    return account;
  }

  /** Runs the built `svc` bin as a process (asynchronously: the fake Stripe lives in this process). */
  function svc(args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<CliRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH, SVC_BASE_URL: suite.gw, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
      child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin ?? '');
    });
  }

  const rejection = async (promise: Promise<unknown>): Promise<SearchGatewayError> => {
    try {
      await promise;
    } catch (error) {
      expect(error).toBeInstanceOf(SearchGatewayError);
      return error as SearchGatewayError;
    }
    throw new Error('expected a SearchGatewayError');
  };

  describe('the SDK', () => {
    let account: { accountId: string; managementKey: string };
    let admin: SearchGateway;

    beforeAll(async () => {
      account = await fundedAccount('sdk', 5);
      admin = new SearchGateway({ baseUrl: suite.gw, managementKey: account.managementKey });
    }, 60_000);

    it('reads the public catalog and prices', async () => {
      const models = await admin.models();
      expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining(['exa/fast', 'brave/web', 'tavily/basic']));
      expect(models.data.every((m) => m.available)).toBe(true);
      expect(models.request_id).toMatch(/^req_/);
      const pricing = await admin.pricing();
      expect(pricing.purchase).toEqual({ min_usd: 5, max_usd: 10000 });
      expect(pricing.models.find((m) => m.id === 'brave/web')?.base_usd).toBe(0.006);
    });

    it('manages keys: create, list every page with the iterator, update, disable, enable, delete', async () => {
      const created = await Promise.all([1, 2, 3, 4, 5].map((i) => admin.keys.create({ name: `sdk-${i}` })));
      for (const key of created) expect(key.secret).toMatch(/^svc-/);
      const listed: string[] = [];
      for await (const key of admin.keys.iterate({ limit: 2 })) listed.push(key.id);
      expect(listed).toEqual(expect.arrayContaining(created.map((k) => k.id)));
      expect(new Set(listed).size).toBe(listed.length);
      expect((await admin.keys.list({ limit: 2 })).data).toHaveLength(2);

      const [first] = created;
      if (first === undefined) throw new Error('no key');
      const updated = await admin.keys.update(first.id, { limit_usd: 1, limit_reset: 'daily' });
      expect(updated).toMatchObject({ id: first.id, limit_usd: 1, limit_reset: 'daily', limit_remaining_usd: 1 });
      expect((await admin.keys.get(first.id)).limit_usd).toBe(1);

      const user = new SearchGateway({ baseUrl: suite.gw, apiKey: first.secret });
      expect((await user.key()).kind).toBe('api');
      expect((await admin.keys.disable(first.id)).disabled).toBe(true);
      const disabled = await rejection(user.key());
      expect(disabled).toMatchObject({ status: 401, code: 'key_disabled' });
      expect(disabled.requestId).toMatch(/^req_/);
      expect((await admin.keys.enable(first.id)).disabled).toBe(false);
      expect((await user.key()).id).toBe(first.id);

      expect(await admin.keys.delete(first.id)).toMatchObject({ id: first.id, deleted: true });
      expect(await rejection(admin.keys.get(first.id))).toMatchObject({ status: 404, code: 'not_found' });
      expect(await rejection(user.credits())).toMatchObject({ status: 401, code: 'invalid_api_key' });
    });

    it('searches with fallback, is charged for the answer only, and sees it in credits and usage', async () => {
      const key = await admin.keys.create({ name: 'searcher' });
      const user = new SearchGateway({ baseUrl: suite.gw, apiKey: key.secret });
      const before = await user.credits();
      const result = await user.search({ query: 'rust sim:exa=error500', models: ['exa/fast', 'brave/web'], max_results: 2 });
      expect(result).toMatchObject({ model: 'brave/web', provider: 'brave', source: 'platform', cost_usd: 0.006 });
      expect(result.results).toHaveLength(2);
      expect(result.attempts).toEqual([{ model: 'exa/fast', source: 'platform', status: 'error', error: 'provider returned 500' }]);
      expect((await user.credits()).balance_usd).toBeCloseTo(before.balance_usd - 0.006, 6);

      // By model, a search counts for the model that answered; the failed Exa attempt counts for Exa.
      const expected = [
        { model: 'brave/web', searches: 1, failed_attempts: 0, cost_usd: 0.006, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
        { model: 'exa/fast', searches: 0, failed_attempts: 1, cost_usd: 0, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      ];
      const usage = await waitFor('the search in usage', async () => {
        const u = await user.usage({ group_by: 'model' });
        return JSON.stringify(u.data) === JSON.stringify(expected) ? u : undefined;
      });
      expect(usage.total).toEqual({ searches: 1, cost_usd: 0.006, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
      expect((await admin.usage({ group_by: 'key', key_id: key.id })).data).toEqual([expect.objectContaining({ key_id: key.id, searches: 1 })]);
    });

    it('throws typed errors: all_providers_failed with attempts, key_limit_exceeded with needed_usd, wrong_key_type, unknown_provider', async () => {
      const key = await admin.keys.create({ name: 'errors' });
      const user = new SearchGateway({ baseUrl: suite.gw, apiKey: key.secret });
      const failed = await rejection(user.search({ query: 'rust sim:*=error500', models: ['exa/fast', 'brave/web'] }));
      expect(failed.status).toBe(502);
      expect(failed.code).toBe('all_providers_failed');
      expect(failed.attempts?.map((a) => [a.model, a.status])).toEqual([['exa/fast', 'error'], ['brave/web', 'error']]);

      const tiny = await admin.keys.create({ name: 'tiny', limit_usd: 0.001 });
      const limited = await rejection(new SearchGateway({ baseUrl: suite.gw, apiKey: tiny.secret }).search({ query: 'rust', model: 'exa/fast' }));
      expect(limited).toMatchObject({ status: 402, code: 'key_limit_exceeded', neededUsd: 0.009 });

      // search() sends the API key; this client has none, so the gateway says 401.
      expect(await rejection(admin.search({ query: 'rust', model: 'exa/fast' }))).toMatchObject({ status: 401, code: 'invalid_api_key' });
      const managementAsApiKey = new SearchGateway({ baseUrl: suite.gw, apiKey: account.managementKey });
      expect(await rejection(managementAsApiKey.search({ query: 'rust', model: 'exa/fast' }))).toMatchObject({ status: 403, code: 'wrong_key_type' });
      expect(await rejection(admin.providerKeys.get('google' as Provider))).toMatchObject({ status: 400, code: 'unknown_provider' });
      expect(await rejection(admin.checkout({ amount_usd: 4 }))).toMatchObject({ status: 400, code: 'invalid_request' });
    });

    it('creates a checkout session whose payment adds the credits', async () => {
      const before = (await admin.credits()).balance_usd;
      const session = await admin.checkout({ amount_usd: 25 });
      expect(session).toMatchObject({ amount_usd: 25 });
      expect(session.id).toMatch(/^chk_/);
      expect(session.url.startsWith(`${suite.stripe.url}/`)).toBe(true);
      const sessionId = session.url.split('/').at(-1) ?? '';
      const paid = await suite.stripe.deliver(suite.stripe.event('checkout.session.completed', suite.stripe.completeSession(sessionId)), { url: `${suite.gw}/v1/credits/webhook` });
      expect(paid.status).toBe(200);
      const after = await waitFor('the purchase in the balance', async () => {
        const credits = await admin.credits();
        return credits.total_purchased_usd === 25 ? credits : undefined;
      });
      expect(after.balance_usd).toBeCloseTo(before + 25, 6);
    });
  });

  describe('the svc CLI, as a process', () => {
    let account: { accountId: string; managementKey: string };
    let apiKey: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      account = await fundedAccount('cli', 5);
      const created = await new SearchGateway({ baseUrl: suite.gw, managementKey: account.managementKey }).keys.create({ name: 'cli' });
      apiKey = created.secret;
      env = { SVC_API_KEY: apiKey, SVC_MANAGEMENT_KEY: account.managementKey };
    }, 60_000);

    it('svc models and svc pricing need no key', async () => {
      const models = await svc(['models'], {});
      expect(models.code).toBe(0);
      expect(models.stdout).toMatch(/^ID\s+PROVIDER\s+MAX_RESULTS/);
      expect(models.stdout).toMatch(/\nexa\/fast\s+exa\s+100\s+0\.009\s+10\s+0\.00125\s+-\s+yes\s+include_domains,exclude_domains,country,published_after,published_before\s+none,text,highlights\n/);
      expect(models.stdout).toMatch(/\nExtract models \(svc extract\):\n/);
      expect(models.stdout).toMatch(/\ntavily\/extract\s+tavily\s+20\s+0\.002\s+5\s+-\s+yes\s+text,markdown\s+query\n/);
      const pricing = await svc(['pricing', '--json'], {});
      expect(pricing.code).toBe(0);
      expect(JSON.parse(pricing.stdout)).toMatchObject({ currency: 'USD', purchase: { min_usd: 5, max_usd: 10000 } });
    });

    it('svc search falls back from a failing model and prints the results; --json gives the body', async () => {
      const result = await svc(['search', 'rust sim:exa=error500', '-m', 'exa/fast', '-m', 'brave/web', '--max', '3'], env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('brave/web (platform) answered with 3 results: cost 0.006 USD');
      expect(result.stdout).toContain('before it: exa/fast error: provider returned 500');
      expect(result.stdout).toMatch(/\n1\s+\S.*https?:\/\//);
      const asJson = await svc(['search', 'rust', '-m', 'tavily/basic', '--max', '1', '--json'], env);
      expect(asJson.code).toBe(0);
      expect(JSON.parse(asJson.stdout)).toMatchObject({ model: 'tavily/basic', attempts: [], cost_usd: 0.01 });
    });

    it('svc extract reads pages with fallback per URL and prints each page; --json gives the body; the SDK\'s extract() the same', async () => {
      const result = await svc(['extract', 'https://example.com/cli/page', 'https://example.com/sim-fail-exa/cli', '-m', 'exa/contents', '-m', 'tavily/extract', '--max-chars', '300'], env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('2 of 2 pages read: cost 0.01125 USD');
      expect(result.stdout).toContain('exa/contents success: 1 of 2 URLs, 0.00125 USD (1 of 2 URLs could not be fetched)');
      expect(result.stdout).toMatch(/\n== .* \(https:\/\/example\.com\/sim-fail-exa\/cli, tavily\/extract, cut\)\n/);
      const asJson = await svc(['extract', 'https://example.com/cli/json', '-m', 'tavily/extract', '--format', 'markdown', '--json'], env);
      expect(asJson.code).toBe(0);
      expect(JSON.parse(asJson.stdout)).toMatchObject({ results: [{ url: 'https://example.com/cli/json', model: 'tavily/extract' }], failed: [], cost_usd: 0.01 });
      const bad = await svc(['extract', 'https://example.com/x', '-m', 'exa/contents', '--format', 'html'], env);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('--format must be text or markdown');
    });

    it('svc keys: create, list, update, disable, enable, delete', async () => {
      const created = await svc(['keys', 'create', '--name', 'from-cli', '--json'], env);
      expect(created.code).toBe(0);
      const key = JSON.parse(created.stdout) as { id: string; secret: string };
      expect(key.secret).toMatch(/^svc-/);
      const listed = await svc(['keys', 'list', '--page-size', '1', '--json'], env);
      expect((JSON.parse(listed.stdout) as { id: string }[]).map((k) => k.id)).toEqual(expect.arrayContaining([key.id]));
      const table = await svc(['keys', 'list'], env);
      expect(table.stdout).toMatch(new RegExp(`\\n${key.id}\\s+from-cli\\s+svc-`));

      const updated = await svc(['keys', 'update', key.id, '--limit-usd', '2', '--limit-reset', 'weekly', '--json'], env);
      expect(JSON.parse(updated.stdout)).toMatchObject({ limit_usd: 2, limit_reset: 'weekly' });

      expect((await svc(['keys', 'disable', key.id], env)).stdout).toBe(`${key.id} is disabled\n`);
      const refused = await svc(['credits'], { SVC_API_KEY: key.secret });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('401 key_disabled');
      expect((await svc(['keys', 'enable', key.id], env)).code).toBe(0);
      expect((await svc(['credits'], { SVC_API_KEY: key.secret })).code).toBe(0);

      expect((await svc(['keys', 'delete', key.id], env)).stdout).toBe(`${key.id} is deleted\n`);
      const gone = await svc(['keys', 'get', key.id], env);
      expect(gone.code).toBe(6);
      expect(gone.stderr).toContain('404 not_found');
    });

    it('svc credits, svc key and svc usage read the account', async () => {
      const credits = await svc(['credits', '--json'], env);
      expect(credits.code).toBe(0);
      expect(JSON.parse(credits.stdout).balance_usd).toBeLessThan(5);
      const key = await svc(['key'], env);
      expect(key.stdout).toMatch(/^kind\s+api$/m);
      const management = await svc(['key', '--json'], { SVC_MANAGEMENT_KEY: account.managementKey });
      expect(JSON.parse(management.stdout).kind).toBe('management');
      const usage = await waitFor('the CLI searches in usage', async () => {
        const run = await svc(['usage', '--group-by', 'model', '--json'], env);
        const body = JSON.parse(run.stdout) as { total: { searches: number } };
        return body.total.searches >= 2 ? run : undefined;
      }, { timeoutMs: 30_000, intervalMs: 200 });
      expect(usage.code).toBe(0);
      const today = new Date().toISOString().slice(0, 10);
      const table = await svc(['usage', '--from', today, '--to', today, '--group-by', 'model'], { SVC_MANAGEMENT_KEY: account.managementKey });
      expect(table.stdout).toMatch(/\nbrave\/web\s+1\s+0\s+0\.006\n/);
      expect(table.stdout).toMatch(/\nexa\/fast\s+0\s+1\s+0\n/);
      expect(table.stdout).toMatch(/\ntavily\/basic\s+1\s+0\s+0\.01\n/);
    });

    it('svc checkout prints the payment link; paying it adds the credits', async () => {
      const result = await svc(['checkout', '25'], env);
      expect(result.code).toBe(0);
      const link = result.stdout.trimEnd().split('\n').at(-1) ?? '';
      expect(link.startsWith(`${suite.stripe.url}/pay/`)).toBe(true);
      const paid = await suite.stripe.deliver(suite.stripe.event('checkout.session.completed', suite.stripe.completeSession(link.split('/').at(-1) ?? '')), { url: `${suite.gw}/v1/credits/webhook` });
      expect(paid.status).toBe(200);
      await waitFor('the purchase', async () => {
        const credits = JSON.parse((await svc(['credits', '--json'], env)).stdout) as { total_purchased_usd: number };
        return credits.total_purchased_usd === 25 ? true : undefined;
      }, { intervalMs: 200 });
    });

    it('exit codes by class: 3 auth, 4 payment, 6 invalid, 7 provider failure, 8 no answer, 2 usage', async () => {
      expect((await svc(['search', 'rust', '-m', 'exa/fast'], { SVC_API_KEY: account.managementKey })).code).toBe(3);
      expect((await svc(['keys', 'list'], { SVC_API_KEY: apiKey })).code).toBe(3);
      const tiny = JSON.parse((await svc(['keys', 'create', '--limit-usd', '0.001', '--json'], env)).stdout) as { secret: string };
      const poor = await svc(['search', 'rust', '-m', 'exa/fast'], { SVC_API_KEY: tiny.secret });
      expect(poor.code).toBe(4);
      expect(poor.stderr).toContain('(needed 0.009 USD)');
      expect((await svc(['checkout', '4'], env)).code).toBe(6);
      expect((await svc(['search', 'rust', '-m', 'exa/nope'], env)).code).toBe(6);
      expect((await svc(['provider-keys', 'get', 'google'], env)).code).toBe(6);
      const failed = await svc(['search', 'rust sim:*=error500', '-m', 'exa/fast', '-m', 'tavily/basic'], env);
      expect(failed.code).toBe(7);
      expect(failed.stderr).toContain('502 all_providers_failed');
      expect(failed.stderr).toContain('tavily/basic error: provider returned 500');
      const dead = `http://127.0.0.1:${await freePort()}`;
      expect((await svc(['models', '--max-retries', '0'], { SVC_BASE_URL: dead })).code).toBe(8);
      expect((await svc(['search', 'rust'], env)).code).toBe(2);
    });
  });
});
