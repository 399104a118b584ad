import { bearer, call, dumpDatabase, dumpRedis, newAccount, newApiKey, useStack } from '@svc/test-kit';

describe('secrets, object-level authorization and bad input through the gateway', () => {
  const suite = useStack({ name: 'secrets', redisDb: 6 }, { timeoutMs: 90_000 });

  it('a created secret appears exactly once: never in PostgreSQL, Redis, the logs or any listing', async () => {
    const account = await newAccount(suite.gw, 'secrets');
    const created = await call('POST', `${suite.gw}/v1/keys`, { body: { name: 'once' }, headers: bearer(account.managementKey) });
    expect(created.status).toBe(201);
    const secret = String(created.body.secret);
    expect(secret).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);
    // Use both secrets so every cache layer and log line on the path has seen them.
    expect((await call('GET', `${suite.gw}/v1/key`, { headers: bearer(secret) })).status).toBe(200);
    expect((await call('GET', `${suite.gw}/v1/credits`, { headers: bearer(secret) })).status).toBe(200);
    const reads = [
      await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(account.managementKey) }),
      await call('GET', `${suite.gw}/v1/keys/${created.body.id}`, { headers: bearer(account.managementKey) }),
      await call('GET', `${suite.gw}/v1/key`, { headers: bearer(secret) }),
      await call('PATCH', `${suite.gw}/v1/keys/${created.body.id}`, { body: { name: 'renamed' }, headers: bearer(account.managementKey) }),
      await call('GET', `${suite.gw}/dashboard/api/management-keys`, { headers: account.session }),
    ];
    for (const read of reads) expect(read.status).toBe(200);
    const listing = reads[0]?.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listing.label).toBe(`${secret.slice(0, 8)}…`);
    expect(listing).not.toHaveProperty('secret');

    const places = {
      listings: reads.map((r) => r.text).join('\n'),
      accountAdminDb: await dumpDatabase(suite.stack.databases.accountAdmin),
      billingDb: await dumpDatabase(suite.stack.databases.billing),
      redis: await dumpRedis(suite.redis),
      logs: suite.stack.logs(),
    };
    expect(places.accountAdminDb).toContain(String(created.body.id)); // the dump really holds the key's row
    expect(places.logs.length).toBeGreaterThan(0);
    for (const [where, text] of Object.entries(places)) {
      for (const s of [secret, account.managementKey]) {
        if (text.includes(s)) throw new Error(`a secret was found in ${where}`);
        // The random part alone (after the kind's prefix) must not appear either. Not "after
        // the first dash past the prefix": base64url has dashes, and the few characters after
        // one can occur anywhere by chance.
        const random = s.replace(/^svc-(?:mgmt-)?/, '');
        expect(random).toHaveLength(43);
        expect(text.includes(random)).toBe(false);
      }
    }
  });

  it("another account's key ids answer 404 not_found and stay untouched", async () => {
    const owner = await newAccount(suite.gw, 'owner');
    const other = await newAccount(suite.gw, 'other');
    const key = await newApiKey(suite.gw, owner.managementKey);
    for (const [method, body] of [['GET', undefined], ['PATCH', { disabled: true }], ['DELETE', undefined]] as const) {
      const response = await call(method, `${suite.gw}/v1/keys/${key.id}`, { body, headers: bearer(other.managementKey) });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const list = await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(other.managementKey) });
    expect(list.body.data.map((k: { id: string }) => k.id)).not.toContain(key.id);
    expect((await call('GET', `${suite.gw}/v1/key`, { headers: bearer(key.secret) })).status).toBe(200);
  });

  it('bad input answers 400 invalid_request naming the problem, never a 500, and changes nothing', async () => {
    const account = await newAccount(suite.gw, 'input');
    const key = await newApiKey(suite.gw, account.managementKey);
    const mgmt = bearer(account.managementKey);
    const cases: [string, string, { body?: unknown; raw?: string }, RegExp][] = [
      ['POST', '/v1/keys', { body: { name: 'x', colour: 'red' } }, /colour/],
      ['POST', '/v1/keys', { body: { expires_at: 'tomorrow' } }, /expires_at/],
      ['POST', '/v1/keys', { body: { expires_at: '2020-01-01T00:00:00Z' } }, /expires_at/],
      ['POST', '/v1/keys', { body: { limit_usd: -1 } }, /limit_usd/],
      ['POST', '/v1/keys', { body: { limit_reset: 'daily' } }, /limit_reset|limit_usd/],
      ['POST', '/v1/keys', { raw: '{"name": "x",' }, /JSON/i],
      ['POST', '/v1/keys', { raw: 'not json at all' }, /JSON/i],
      ['PATCH', `/v1/keys/${key.id}`, { body: { disabled: 'yes' } }, /disabled/],
      ['PATCH', `/v1/keys/${key.id}`, { body: { expires_at: '2026-13-45T99:00:00Z' } }, /expires_at/],
      ['GET', '/v1/keys?limit=0', {}, /limit/],
      ['GET', '/v1/keys?limit=101', {}, /limit/],
      ['GET', '/v1/keys?limit=abc', {}, /limit/],
      ['GET', '/v1/keys?cursor=not-a-cursor', {}, /cursor/],
      ['GET', '/v1/keys?cursor=%%%', {}, /query string/],
    ];
    for (const [method, path, input, names] of cases) {
      const response = await call(method, `${suite.gw}${path}`, { ...input, headers: mgmt });
      if (response.status !== 400) throw new Error(`${method} ${path} answered ${response.status}: ${response.text}`);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.message).toMatch(names);
    }
    const after = await call('GET', `${suite.gw}/v1/keys/${key.id}`, { headers: mgmt });
    expect(after.body).toMatchObject({ disabled: false, expires_at: null, name: 'k' });
    const keys = await call('GET', `${suite.gw}/v1/keys`, { headers: mgmt });
    expect(keys.body.data).toHaveLength(1);
  });

  it('an unknown path is 404 and a wrong method is 405, both JSON with the request id', async () => {
    const unknown = await call('GET', `${suite.gw}/v1/nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.request_id).toBe(unknown.headers.get('x-svc-request-id'));
    const wrong = await call('DELETE', `${suite.gw}/v1/models`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('GET');
    expect(wrong.headers.get('x-svc-request-id')).toMatch(/^req_[0-9A-Za-z]{24,}$/);
  });
});
