import { bearer, call, newAccount, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * The dashboard's session endpoints through the public edge: they act for the signed-in
 * user's account with the /v1 bodies, validation and error codes; every change needs the
 * CSRF header; another account's ids are 404; credits, usage and history come from billing.
 */
describe('dashboard session endpoints through the gateway', () => {
  const suite = useStack({ ...SETTLING_STACK, name: 'dash_api', redisDb: 11 });

  const dash = (method: string, path: string, session: Record<string, string>, body?: unknown): Promise<JsonResponse> =>
    call(method, `${suite.gw}/dashboard/api${path}`, { body, headers: session });
  const noCsrf = (session: Record<string, string>): Record<string, string> => ({ cookie: session.cookie ?? '' });

  async function fund(accountId: string, usd: number): Promise<void> {
    await grantCredits(suite.stack, accountId, usd * 1_000_000, { redis: suite.redis, reason: 'e2e' });
  }

  it('API keys: create with every field, list, get, patch and delete with the session alone, answering as /v1/keys does', async () => {
    const { session, managementKey } = await newAccount(suite.gw, 'dash-keys');
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const created = await dash('POST', '/keys', session, { name: 'ci', limit_usd: 10, limit_reset: 'monthly', expires_at: expires, disabled: false });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', limit_usd: 10, limit_reset: 'monthly', expires_at: expires, disabled: false, usage_usd: 0, limit_remaining_usd: 10 });
    expect(created.body.secret).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);
    expect(created.body.request_id).toBe(created.headers.get('x-svc-request-id'));
    const id = String(created.body.id);

    // The same record through /v1 with a management key.
    const viaV1 = await call('GET', `${suite.gw}/v1/keys/${id}`, { headers: bearer(managementKey) });
    const viaSession = await dash('GET', `/keys/${id}`, session);
    expect(viaSession.status).toBe(200);
    const { request_id: _a, ...v1Record } = viaV1.body as Record<string, unknown>;
    const { request_id: _b, ...sessionRecord } = viaSession.body as Record<string, unknown>;
    expect(sessionRecord).toEqual(v1Record);

    const list = await dash('GET', '/keys?limit=1', session);
    expect(list.status).toBe(200);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([id]);
    expect(list.body.next_cursor).toBeNull();

    const patched = await dash('PATCH', `/keys/${id}`, session, { name: 'renamed', limit_usd: null, disabled: true });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'renamed', limit_usd: null, limit_reset: null, disabled: true });
    // The gateway dropped the key from its cache at once: searching with it is refused as disabled.
    const refused = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'x', model: 'exa/fast' }, headers: bearer(String(created.body.secret)) });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'key_disabled']);

    const deleted = await dash('DELETE', `/keys/${id}`, session);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id, deleted: true });
    expect((await dash('GET', `/keys/${id}`, session)).status).toBe(404);
  });

  it('validates bodies and queries exactly as /v1/keys: the same status, code and message', async () => {
    const { session, managementKey } = await newAccount(suite.gw, 'dash-valid');
    const bodies: unknown[] = [
      { name: '' }, { limit_usd: 0 }, { limit_usd: 'ten' }, { limit_reset: 'monthly' }, { limit_reset: 'yearly', limit_usd: 1 },
      { expires_at: '2001-01-01T00:00:00Z' }, { expires_at: 'tomorrow' }, { disabled: 'yes' }, { kind: 'management' },
    ];
    for (const body of bodies) {
      const v1 = await call('POST', `${suite.gw}/v1/keys`, { body, headers: bearer(managementKey) });
      const mine = await dash('POST', '/keys', session, body);
      expect([JSON.stringify(body), mine.status, mine.body.error.code, mine.body.error.message]).toEqual([JSON.stringify(body), v1.status, v1.body.error.code, v1.body.error.message]);
      expect(mine.status).toBe(400);
    }
    const notJson = await call('POST', `${suite.gw}/dashboard/api/keys`, { raw: '{"name":', headers: session });
    expect([notJson.status, notJson.body.error.code]).toEqual([400, 'invalid_request']);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'cursor=', 'cursor=nope', 'colour=red']) {
      const v1 = await call('GET', `${suite.gw}/v1/keys?${query}`, { headers: bearer(managementKey) });
      const mine = await dash('GET', `/keys?${query}`, session);
      expect([query, mine.status, mine.body.error.code]).toEqual([query, v1.status, v1.body.error.code]);
    }
  });

  it('refuses every change without the right x-csrf-token (400 invalid_request) and changes nothing', async () => {
    const { session } = await newAccount(suite.gw, 'dash-csrf');
    const key = await dash('POST', '/keys', session, { name: 'kept' });
    const mgmt = await dash('POST', '/management-keys', session, { name: 'm' });
    const wrong = { cookie: session.cookie ?? '', 'x-csrf-token': 'not-the-token' };
    const attempts: [string, string, unknown][] = [
      ['POST', '/keys', { name: 'sneaky' }],
      ['PATCH', `/keys/${key.body.id}`, { disabled: true }],
      ['DELETE', `/keys/${key.body.id}`, undefined],
      ['PATCH', `/management-keys/${mgmt.body.id}`, { disabled: true }],
      ['POST', '/credits/checkout', { amount_usd: 20 }],
    ];
    for (const [method, path, body] of attempts) {
      for (const headers of [noCsrf(session), wrong]) {
        const refused = await dash(method, path, headers, body);
        expect([method, path, refused.status, refused.body.error.code, refused.body.error.message]).toEqual([method, path, 400, 'invalid_request', 'missing or wrong x-csrf-token']);
      }
    }
    const after = await dash('GET', '/keys', session);
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0]).toMatchObject({ id: key.body.id, name: 'kept', disabled: false });
    const mgmtAfter = await dash('GET', '/management-keys', session);
    expect(mgmtAfter.body.data.find((k: { id: string }) => k.id === mgmt.body.id)).toMatchObject({ disabled: false });
  });

  it('answers 401 without a session on every endpoint, reads included', async () => {
    for (const [method, path] of [
      ['GET', '/keys'], ['POST', '/keys'], ['GET', '/keys/key_x'], ['PATCH', '/keys/key_x'], ['DELETE', '/keys/key_x'],
      ['PATCH', '/management-keys/mk_x'], ['GET', '/credits'], ['POST', '/credits/checkout'], ['GET', '/usage'],
      ['GET', '/usage/daily-by-model'], ['GET', '/activity'], ['GET', '/credits/purchases'],
    ] as const) {
      const response = await call(method, `${suite.gw}/dashboard/api${path}`, { body: method === 'GET' || method === 'DELETE' ? undefined : {}, headers: { cookie: 'svc_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
      expect([method, path, response.status, response.body.error.code]).toEqual([method, path, 401, 'invalid_api_key']);
    }
  });

  it("another account's key ids answer 404 not_found, as do unknown and malformed ids; nothing of theirs changes", async () => {
    const mine = await newAccount(suite.gw, 'dash-mine');
    const theirs = await newAccount(suite.gw, 'dash-theirs');
    const theirKey = await dash('POST', '/keys', theirs.session, { name: 'theirs' });
    const theirMgmt = await dash('POST', '/management-keys', theirs.session, { name: 'their-mgmt' });
    for (const id of [theirKey.body.id, 'key_000000000000000000000000', 'nonsense']) {
      for (const [method, body] of [['GET', undefined], ['PATCH', { disabled: true }], ['DELETE', undefined]] as const) {
        const response = await dash(method, `/keys/${id}`, mine.session, body);
        expect([id, method, response.status, response.body.error.code]).toEqual([id, method, 404, 'not_found']);
      }
    }
    for (const id of [theirMgmt.body.id, 'nonsense']) {
      const response = await dash('PATCH', `/management-keys/${id}`, mine.session, { disabled: true });
      expect([id, response.status, response.body.error.code]).toEqual([id, 404, 'not_found']);
    }
    const usageOfTheirKey = await dash('GET', `/usage?key_id=${theirKey.body.id}`, mine.session);
    expect(usageOfTheirKey.status).toBe(200);
    expect(usageOfTheirKey.body.total).toMatchObject({ searches: 0, cost_usd: 0 });
    expect((await dash('GET', `/keys/${theirKey.body.id}`, theirs.session)).body).toMatchObject({ name: 'theirs', disabled: false });
    const theirMgmtList = await dash('GET', '/management-keys', theirs.session);
    expect(theirMgmtList.body.data.find((k: { id: string }) => k.id === theirMgmt.body.id)).toMatchObject({ disabled: false });
  });

  it('management keys: rename, disable (the key is refused at once), enable; unknown fields and wrong types are 400', async () => {
    const { session } = await newAccount(suite.gw, 'dash-mgmt');
    const created = await dash('POST', '/management-keys', session, { name: 'ops' });
    const id = String(created.body.id);
    const renamed = await dash('PATCH', `/management-keys/${id}`, session, { name: 'ops-2' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id, name: 'ops-2', label: created.body.label, disabled: false, last_used_at: null });
    expect((await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(String(created.body.secret)) })).status).toBe(200);
    const disabled = await dash('PATCH', `/management-keys/${id}`, session, { disabled: true });
    expect(disabled.body).toMatchObject({ disabled: true });
    const refused = await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(String(created.body.secret)) });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'key_disabled']);
    await dash('PATCH', `/management-keys/${id}`, session, { disabled: false });
    expect((await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(String(created.body.secret)) })).status).toBe(200);
    const list = await dash('GET', '/management-keys', session);
    expect(list.body.data.find((k: { id: string }) => k.id === id)).toMatchObject({ name: 'ops-2', disabled: false });
    for (const body of [{ name: '' }, { name: 7 }, { disabled: 'no' }, { disabled: null }, { limit_usd: 5 }]) {
      const bad = await dash('PATCH', `/management-keys/${id}`, session, body);
      expect([JSON.stringify(body), bad.status, bad.body.error.code]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
    }
  });

  it('credits, usage, daily spend and activity come from billing for the signed-in account, equal to what /v1 shows', async () => {
    const { accountId, session, managementKey } = await newAccount(suite.gw, 'dash-usage');
    await fund(accountId, 5);
    const key = await dash('POST', '/keys', session, { name: 'searcher' });
    const secret = String(key.body.secret);
    const ids: string[] = [];
    // The second with filters both models honour: the activity keeps them, in canonical form.
    const filtersOf: Record<string, object> = { two: { country: 'US', published_before: '2026-01-01T00:00:00-05:00' } };
    for (const query of ['one', 'two', 'three sim:exa=error500']) {
      const searched = await call('POST', `${suite.gw}/v1/search`, { body: { query, model: 'exa/fast', models: ['brave/web'], ...filtersOf[query] }, headers: bearer(secret) });
      expect(searched.status).toBe(200);
      ids.push(String(searched.body.request_id));
    }
    const activity = await waitFor('three searches in the activity', async () => {
      const page = await dash('GET', '/activity', session);
      return page.status === 200 && page.body.data.length === 3 ? page : undefined;
    }, { timeoutMs: 30_000 });
    // Newest first (settled in order), each with its attempts.
    expect(activity.body.data.map((a: { request_id: string }) => a.request_id)).toEqual([...ids].reverse());
    expect(activity.body.next_cursor).toBeNull();
    const fallback = activity.body.data[0];
    expect(fallback).toMatchObject({ key_id: key.body.id, model: 'brave/web', status: 'success' });
    expect(fallback.attempts.map((a: { model: string; status: string }) => [a.model, a.status])).toEqual([['exa/fast', 'error'], ['brave/web', 'success']]);
    expect(activity.body.data[2]).toMatchObject({ model: 'exa/fast', status: 'success', attempts: [expect.objectContaining({ model: 'exa/fast', status: 'success' })] });
    expect(activity.body.data.map((a: { filters: unknown }) => a.filters)).toEqual([null, { country: 'US', published_before: '2026-01-01T05:00:00.000Z' }, null]);

    const pageOne = await dash('GET', '/activity?limit=2', session);
    expect(pageOne.body.data.map((a: { request_id: string }) => a.request_id)).toEqual([ids[2], ids[1]]);
    const pageTwo = await dash('GET', `/activity?limit=2&cursor=${encodeURIComponent(String(pageOne.body.next_cursor))}`, session);
    expect(pageTwo.body.data.map((a: { request_id: string }) => a.request_id)).toEqual([ids[0]]);
    expect(pageTwo.body.next_cursor).toBeNull();
    for (const query of ['limit=0', 'limit=101', 'limit=two', 'cursor=bad!', 'cursor=Zm9v', 'since=today']) {
      const bad = await dash('GET', `/activity?${query}`, session);
      expect([query, bad.status, bad.body.error.code]).toEqual([query, 400, 'invalid_request']);
    }

    const credits = await dash('GET', '/credits', session);
    const v1Credits = await call('GET', `${suite.gw}/v1/credits`, { headers: bearer(managementKey) });
    expect(credits.status).toBe(200);
    expect({ ...credits.body, request_id: null }).toEqual({ ...v1Credits.body, request_id: null });
    expect(credits.body.request_id).toBe(credits.headers.get('x-svc-request-id'));
    const total = activity.body.data.reduce((sum: number, a: { cost_usd: number }) => sum + a.cost_usd, 0);
    expect(credits.body.total_spent_usd).toBeCloseTo(total, 9);

    for (const query of ['group_by=day', 'group_by=model', 'group_by=key', `key_id=${key.body.id}`]) {
      const mine = await dash('GET', `/usage?${query}`, session);
      const v1 = await call('GET', `${suite.gw}/v1/usage?${query}`, { headers: bearer(managementKey) });
      expect([query, mine.status, { ...mine.body, request_id: null }]).toEqual([query, 200, { ...v1.body, request_id: null }]);
    }
    for (const query of ['group_by=week', 'from=2026-02-30', 'from=2026-03-02&to=2026-03-01', 'key_id=mk_1']) {
      const mine = await dash('GET', `/usage?${query}`, session);
      const v1 = await call('GET', `${suite.gw}/v1/usage?${query}`, { headers: bearer(managementKey) });
      expect([query, mine.status, mine.body.error.code, mine.body.error.message]).toEqual([query, 400, 'invalid_request', v1.body.error.message]);
    }
    const daily = await dash('GET', '/usage/daily-by-model', session);
    expect(daily.status).toBe(200);
    const byModel = Object.fromEntries(daily.body.data.map((r: { model: string; cost_usd: number }) => [r.model, r.cost_usd]));
    const v1ByModel = await call('GET', `${suite.gw}/v1/usage?group_by=model`, { headers: bearer(managementKey) });
    expect(byModel).toEqual(Object.fromEntries(v1ByModel.body.data.map((r: { model: string; cost_usd: number }) => [r.model, r.cost_usd])));

    // Another account sees none of it.
    const other = await newAccount(suite.gw, 'dash-usage-other');
    expect((await dash('GET', '/activity', other.session)).body.data).toEqual([]);
    expect((await dash('GET', '/usage', other.session)).body.total).toMatchObject({ searches: 0, cost_usd: 0 });
  });

  it('checkout validates the body as /v1 does (400), then answers 503 payment_disabled on a deployment without Stripe; purchases list is empty', async () => {
    const { session } = await newAccount(suite.gw, 'dash-checkout');
    for (const body of [{ amount_usd: 4.99 }, { amount_usd: 10_000.01 }, { amount_usd: '20' }, { amount_usd: 20, success_url: 'javascript:alert(1)' }, { amount_usd: 20, coupon: 'x' }]) {
      const bad = await dash('POST', '/credits/checkout', session, body);
      expect([JSON.stringify(body), bad.status, bad.body.error.code]).toEqual([JSON.stringify(body), 400, 'invalid_request']);
    }
    const off = await dash('POST', '/credits/checkout', session, { amount_usd: 20 });
    expect([off.status, off.body.error.code]).toEqual([503, 'payment_disabled']);
    expect(off.body.error.request_id).toBe(off.headers.get('x-svc-request-id'));
    const purchases = await dash('GET', '/credits/purchases', session);
    expect(purchases.status).toBe(200);
    expect(purchases.body).toMatchObject({ data: [], next_cursor: null });
  });

  it('a known session path with another method is 405 with Allow; an unknown one 404', async () => {
    const { session } = await newAccount(suite.gw, 'dash-405');
    const wrong = await dash('PUT', '/keys', session, {});
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST']);
    const unknown = await dash('GET', '/keyring', session);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
  });

  it("billing's history paths are not reachable through the public edge", async () => {
    const { managementKey } = await newAccount(suite.gw, 'dash-edge');
    for (const path of ['/internal/activity', '/internal/purchases', '/internal/daily-spend']) {
      const response = await call('GET', `${suite.gw}${path}`, { headers: bearer(managementKey) });
      expect([path, response.status]).toEqual([path, 404]);
    }
  });
});
