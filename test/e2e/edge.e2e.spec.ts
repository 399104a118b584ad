import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { bearer, call, newAccount, newApiKey, parseRaw, rawExchange, useStack } from '@svc/test-kit';
import type { RawResponse } from '@svc/test-kit';

/** The platform's error shape with the request id of the header (docs/api.md 4.1). */
function expectPlatformError(response: RawResponse, status: number, code = 'invalid_request'): void {
  expect(response.status).toBe(status);
  expect(response.headers['x-svc-request-id']).toMatch(/^req_[0-9A-Za-z]{24,}$/);
  expect(response.body?.error?.code).toBe(code);
  expect(response.body?.error?.request_id).toBe(response.headers['x-svc-request-id']);
  expect(typeof response.body?.error?.message).toBe('string');
}

describe('the public edge under hostile input (one edge for every service)', () => {
  let managementKey: string;
  let apiKey: string;
  const suite = useStack({ name: 'edge', redisDb: 7, gatewayEnv: { HTTP_REQUEST_TIMEOUT_MS: '1500' } }, { timeoutMs: 90_000 });

  beforeAll(async () => {
    const owner = await newAccount(suite.gw, 'edge');
    managementKey = owner.managementKey;
    apiKey = (await newApiKey(suite.gw, managementKey)).secret;
  });

  it.each([
    ['/v1/key', 'api'], ['/v1/credits', 'api'], ['/v1/usage', 'api'], ['/v1/keys', 'management'], ['/v1/provider-keys', 'management'],
  ])('answers GET %s normally when the client sends Expect: 100-continue', async (path, kind) => {
    const secret = kind === 'api' ? apiKey : managementKey;
    const { status, body, continued } = await new Promise<{ status: number; body: string; continued: boolean }>((resolve, reject) => {
      const req = httpRequest(`${suite.gw}${path}`, { method: 'GET', headers: { ...bearer(secret), expect: '100-continue' } });
      let continued = false;
      req.on('continue', () => {
        continued = true;
        req.end();
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, continued }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(continued).toBe(true);
    expect(status).toBeLessThan(500);
    expect(JSON.parse(body)).not.toHaveProperty('error.code', 'internal');
  });

  it('answers a POST with a body sent after 100 Continue', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const payload = JSON.stringify({ name: 'after-continue' });
      const req = httpRequest(`${suite.gw}/v1/keys`, {
        method: 'POST',
        headers: { ...bearer(managementKey), expect: '100-continue', 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
      });
      req.on('continue', () => req.end(payload));
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(status).toBe(201);
    expect(JSON.parse(body)).toMatchObject({ name: 'after-continue' });
  });

  it('stays up when a client closes a request refused before its body was read, with the body unfinished', async () => {
    // A search with a key that does not exist is refused before its body is read, and the
    // connection stays open for the rest of it; the client then closes with the body
    // unfinished. Node hands the edge that close as a client error on a socket whose response
    // is already done (it once took the process down).
    const head = `POST /v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer svc-0-${'x'.repeat(43)}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    const refused = parseRaw((await rawExchange(suite.gw, `${head}{"query":"${'x'.repeat(1024)}`, { waitMs: 1_000 })).text);
    expect(refused.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await call('GET', `${suite.gw}/v1/models`, { headers: bearer(apiKey) });
    expect(after.status).toBe(200);
  });

  it('answers a key id over 100 characters as 404 not_found, and one over the segment limit as 414, in the platform shape', async () => {
    const long = await call('GET', `${suite.gw}/v1/keys/${'a'.repeat(101)}`, { headers: bearer(managementKey) });
    expect(long.status).toBe(404);
    expect(long.body.error).toMatchObject({ code: 'not_found', request_id: long.headers.get('x-svc-request-id') });
    const tooLong = parseRaw((await rawExchange(suite.gw, `GET /v1/keys/${'a'.repeat(300)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${managementKey}\r\nConnection: close\r\n\r\n`)).text);
    expectPlatformError(tooLong, 414);
  });

  it('answers a bad percent-escape in the path in the platform shape', async () => {
    const response = parseRaw((await rawExchange(suite.gw, `GET /v1/keys/%ff HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).text);
    expectPlatformError(response, 400);
  });

  it.each([
    ['a lowercase method', 'get /v1/models HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a request target without /', 'GET v1/models HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['a header over 16 KB', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431],
    ['bytes that are not HTTP', '\u0000\u0001\u0002 nonsense\r\n\r\n', 400],
  ])('answers %s in the platform shape and closes the connection', async (_what, bytes, status) => {
    const exchange = await rawExchange(suite.gw, bytes);
    expectPlatformError(parseRaw(exchange.text), status);
    expect(exchange.closed).toBe(true);
  });

  it('closes slow senders with 408 once the request timeout passes (HTTP_REQUEST_TIMEOUT_MS)', async () => {
    const { hostname, port } = new URL(suite.gw);
    const senders = Array.from({ length: 10 }, () =>
      new Promise<{ text: string; bytesSent: number }>((resolve, reject) => {
        const socket = connect(Number(port), hostname);
        let text = '';
        let bytesSent = 0;
        socket.write(`POST /v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${managementKey}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`);
        // One byte every 300 ms: far too slow to finish 100,000 bytes; only the server's timeout ends this.
        const drip = setInterval(() => {
          if (!socket.destroyed) {
            socket.write('{');
            bytesSent += 1;
          }
        }, 300);
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ text, bytesSent });
        });
        setTimeout(() => {
          clearInterval(drip);
          socket.destroy();
          reject(new Error('the connection was still open after 20 s'));
        }, 20_000).unref();
      }),
    );
    for (const result of await Promise.all(senders)) {
      expectPlatformError(parseRaw(result.text), 408);
      expect(result.bytesSent).toBeLessThan(100_000);
    }
  }, 30_000);

  it('never writes a query string (or a secret sent in one) to any service log', async () => {
    const marker = `svc-${'Q'.repeat(43)}`;
    await call('GET', `${suite.gw}/v1/credits?api_key=${marker}`, { headers: bearer(apiKey) });
    await call('GET', `${suite.gw}/v1/usage?from=2026-01-01&secret=${marker}`, { headers: bearer(apiKey) });
    await call('GET', `${suite.gw}/v1/nothing-here?token=${marker}`);
    await call('POST', `${suite.gw}/v1/search?key=${marker}`, { headers: bearer(apiKey), body: { query: 'q', model: 'nope/nope' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const logs = suite.stack.logs();
    expect(logs).toContain('"route":"/v1/credits"');
    expect(logs).not.toContain(marker);
    expect(logs).not.toContain('api_key=');
    expect(logs).not.toContain(apiKey);
  });

  it('refuses U+0000 in every stored string with 400 naming the field, and stores nothing', async () => {
    const created = await call('POST', `${suite.gw}/v1/keys`, { headers: bearer(managementKey), body: { name: 'a\u0000b' } });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'invalid_request', message: 'name must not contain the character U+0000' });
    const key = await newApiKey(suite.gw, managementKey, { name: 'plain' });
    const patched = await call('PATCH', `${suite.gw}/v1/keys/${key.id}`, { headers: bearer(managementKey), body: { name: 'x\u0000' } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toContain('name');
    expect((await call('GET', `${suite.gw}/v1/keys/${key.id}`, { headers: bearer(managementKey) })).body.name).toBe('plain');
    const owner = await newAccount(suite.gw, 'nul');
    const mgmt = await call('POST', `${suite.gw}/dashboard/api/management-keys`, { headers: owner.session, body: { name: 'a\u0000b' } });
    expect(mgmt.status).toBe(400);
    expect(mgmt.body.error.message).toContain('name');
    const signup = await call('POST', `${suite.gw}/dashboard/api/signup`, { body: { email: 'a\u0000b@example.com', password: 'correct horse battery staple' } });
    expect(signup.status).toBe(400);
    expect(signup.body.error.message).toContain('email');
    const login = await call('POST', `${suite.gw}/dashboard/api/login`, { body: { email: 'a\u0000b@example.com', password: 'correct horse battery staple' } });
    expect(login.status).toBe(400);
    expect(login.body.error.message).toContain('email');
    const list = await call('GET', `${suite.gw}/v1/keys?limit=100`, { headers: bearer(managementKey) });
    expect(list.body.data.map((k: { name: string }) => k.name)).not.toContain('a\u0000b');
  });

  it.each([8_640_000_000_000_001, Number.MAX_SAFE_INTEGER])('answers a cursor at t=%d with 400 invalid_request', async (t) => {
    const cursor = Buffer.from(JSON.stringify({ t, i: 'key_AAAAAAAAAAAAAAAAAAAAAAAA' })).toString('base64url');
    const response = await call('GET', `${suite.gw}/v1/keys?cursor=${cursor}`, { headers: bearer(managementKey) });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', message: 'cursor is not valid' });
  });
});
