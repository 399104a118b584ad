import { REDIS_TOPOLOGIES, bearer, call, newAccount, newApiKey, startStack, waitFor, grantCredits } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';

/**
 * Spec section 3 (API key states) and section 5 (authentication), through the public
 * gateway with account-admin and billing as separate processes.
 */
describe.each(REDIS_TOPOLOGIES)('key states and authentication through the gateway (%s Redis)', (topology) => {
  let stack: Stack;
  let gw: string;
  let account: Awaited<ReturnType<typeof newAccount>>;

  beforeAll(async () => {
    stack = await startStack({ name: `keystates_${topology}`, redisDb: 4, cluster: topology === 'cluster' });
    gw = stack.gateways[0]?.url ?? '';
    account = await newAccount(gw, 'states');
  }, 90_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const patch = (id: string, body: unknown) => call('PATCH', `${gw}/v1/keys/${id}`, { body, headers: bearer(account.managementKey) });
  const remove = (id: string) => call('DELETE', `${gw}/v1/keys/${id}`, { headers: bearer(account.managementKey) });
  const useKey = (secret: string) => call('GET', `${gw}/v1/key`, { headers: bearer(secret) });

  describe('section 3: state table', () => {
    it('enabled → disabled: requests with the key get 401 key_disabled at once', async () => {
      const key = await newApiKey(gw, account.managementKey);
      expect((await useKey(key.secret)).status).toBe(200);
      expect((await patch(key.id, { disabled: true })).body.disabled).toBe(true);
      const after = await useKey(key.secret);
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('key_disabled');
    });

    it('disabled → re-enabled: the key works again at once', async () => {
      const key = await newApiKey(gw, account.managementKey, { disabled: true });
      expect((await useKey(key.secret)).body.error.code).toBe('key_disabled');
      expect((await patch(key.id, { disabled: false })).status).toBe(200);
      const after = await useKey(key.secret);
      expect(after.status).toBe(200);
      expect(after.body.id).toBe(key.id);
    });

    it('enabled → expired when time reaches expires_at: 401 key_expired', async () => {
      const expiresAt = new Date(Date.now() + 1500);
      const key = await newApiKey(gw, account.managementKey, { expires_at: expiresAt.toISOString() });
      expect((await useKey(key.secret)).status).toBe(200);
      const after = await waitFor('the key to expire', async () => {
        const response = await useKey(key.secret);
        return response.status === 200 ? undefined : { response, at: Date.now() };
      });
      expect(after.at).toBeGreaterThanOrEqual(expiresAt.getTime());
      expect(after.response.status).toBe(401);
      expect(after.response.body.error.code).toBe('key_expired');
    });

    it.each(['enabled', 'disabled', 'expired'] as const)(
      '%s → deleted: 401 invalid_api_key when used, 404 not_found when its id is addressed',
      async (state) => {
        const fields = state === 'disabled' ? { disabled: true } : {};
        const key = await newApiKey(gw, account.managementKey, state === 'expired' ? { expires_at: new Date(Date.now() + 1000).toISOString() } : fields);
        if (state === 'expired') {
          await waitFor('the key to expire', async () => ((await useKey(key.secret)).body.error?.code === 'key_expired' ? true : undefined));
        }
        const deleted = await remove(key.id);
        expect(deleted.status).toBe(200);
        expect(deleted.body).toMatchObject({ id: key.id, deleted: true });
        const used = await useKey(key.secret);
        expect(used.status).toBe(401);
        expect(used.body.error.code).toBe('invalid_api_key');
        for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
          const addressed = await call(method, `${gw}/v1/keys/${key.id}`, { body, headers: bearer(account.managementKey) });
          expect(addressed.status).toBe(404);
          expect(addressed.body.error.code).toBe('not_found');
        }
      },
    );
  });

  describe('section 5: authentication rules', () => {
    it('rule 1: a keyed endpoint without Authorization answers 401 invalid_api_key', async () => {
      for (const path of ['/v1/key', '/v1/credits', '/v1/keys']) {
        const response = await call('GET', `${gw}${path}`);
        expect(response.status).toBe(401);
        expect(response.body.error.code).toBe('invalid_api_key');
        expect(response.body.error.request_id).toBe(response.headers.get('x-svc-request-id'));
      }
    });

    it('rules 2 and 3: a token not of the form Bearer svc-... answers 401 invalid_api_key', async () => {
      for (const header of ['Bearer sk-abc', 'svc-' + 'a'.repeat(43), 'Basic abc', 'Bearer svc-short', 'Bearer ']) {
        const response = await call('GET', `${gw}/v1/key`, { headers: { authorization: header } });
        expect(response.status).toBe(401);
        expect(response.body.error.code).toBe('invalid_api_key');
      }
    });

    it('rule 3: an unknown well-formed key answers 401 invalid_api_key', async () => {
      const response = await useKey('svc-' + 'Z'.repeat(43));
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('invalid_api_key');
    });

    it('rule 4: GET /v1/models and GET /v1/credits/pricing need no key, and ignore a bad one', async () => {
      for (const path of ['/v1/models', '/v1/credits/pricing']) {
        expect((await call('GET', `${gw}${path}`)).status).toBe(200);
        expect((await call('GET', `${gw}${path}`, { headers: { authorization: 'Bearer nonsense' } })).status).toBe(200);
      }
    });

    it('rule 5: an API key on a management endpoint answers 403 wrong_key_type', async () => {
      const key = await newApiKey(gw, account.managementKey);
      const attempts = [
        call('POST', `${gw}/v1/keys`, { body: { name: 'x' }, headers: bearer(key.secret) }),
        call('GET', `${gw}/v1/keys`, { headers: bearer(key.secret) }),
        call('GET', `${gw}/v1/keys/${key.id}`, { headers: bearer(key.secret) }),
        call('PATCH', `${gw}/v1/keys/${key.id}`, { body: { disabled: true }, headers: bearer(key.secret) }),
        call('DELETE', `${gw}/v1/keys/${key.id}`, { headers: bearer(key.secret) }),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.status).toBe(403);
        expect(response.body.error.code).toBe('wrong_key_type');
      }
      expect((await useKey(key.secret)).status).toBe(200);
    });

    it('rule 6: both kinds of key of one account read the same balance', async () => {
      const key = await newApiKey(gw, account.managementKey);
      await grantCredits(stack, account.accountId, Math.round(12.5 * 1_000_000), { reason: 'e2e' });
      const viaApi = await call('GET', `${gw}/v1/credits`, { headers: bearer(key.secret) });
      const viaMgmt = await call('GET', `${gw}/v1/credits`, { headers: bearer(account.managementKey) });
      expect(viaApi.status).toBe(200);
      expect(viaApi.body.balance_usd).toBe(12.5);
      expect(viaMgmt.body.balance_usd).toBe(viaApi.body.balance_usd);
    });

    it('rule 7 and the table: either kind reads its own key with GET /v1/key', async () => {
      const key = await newApiKey(gw, account.managementKey);
      const api = await useKey(key.secret);
      expect(api.body).toMatchObject({ kind: 'api', id: key.id });
      const mgmt = await useKey(account.managementKey);
      expect(mgmt.status).toBe(200);
      expect(mgmt.body.kind).toBe('management');
    });
  });
});
