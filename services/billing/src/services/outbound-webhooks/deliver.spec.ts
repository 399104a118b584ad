import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook } from './deliver';
import type { Resolver } from './deliver';

/** One attempt against real loopback HTTP servers: status, first bytes, no redirects, SSRF by DNS answer, timeout. */
let server: Server;
let port = 0;
const seen: { path: string; body: string; headers: IncomingMessage['headers'] }[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body, headers: req.headers });
      if (req.url === '/ok') res.writeHead(200).end('x'.repeat(1_000));
      else if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` }).end();
      else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(), 2_000).unref();
      else res.writeHead(500).end('broken');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = { policy: { allowHttpAndLoopback: true }, timeoutMs: 500, responseHeadBytes: 256 };

describe('postWebhook', () => {
  it('POSTs the raw body with the given headers and records the status and the first bytes of the answer', async () => {
    const result = await postWebhook(`http://127.0.0.1:${port}/ok`, '{"a":1}', { 'svc-signature': 't=1,v1=ab' }, local);
    expect(result).toMatchObject({ statusCode: 200, error: null });
    expect(result.responseHead).toBe('x'.repeat(256));
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const last = seen.at(-1);
    expect(last).toMatchObject({ path: '/ok', body: '{"a":1}' });
    expect(last?.headers['svc-signature']).toBe('t=1,v1=ab');
    expect(last?.headers['content-type']).toBe('application/json');
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const before = seen.length;
    const result = await postWebhook(`http://127.0.0.1:${port}/redirect`, '{}', {}, local);
    expect(result).toMatchObject({ statusCode: 302, error: 'status 302' });
    expect(seen.length).toBe(before + 1);
  });

  it('records a 5xx with its answer, and a timeout with none', async () => {
    expect(await postWebhook(`http://127.0.0.1:${port}/fail`, '{}', {}, local)).toMatchObject({ statusCode: 500, error: 'status 500', responseHead: 'broken' });
    const slow = await postWebhook(`http://127.0.0.1:${port}/slow`, '{}', {}, local);
    expect(slow).toMatchObject({ statusCode: null, error: 'no answer within 500 ms' });
  });

  it('refuses loopback without the setting, and any private address whatever the setting, before connecting', async () => {
    const before = seen.length;
    expect((await postWebhook(`http://hooks.example.test:${port}/ok`, '{}', {}, { ...local, policy: { allowHttpAndLoopback: false } })).error).toBe('refused: not https');
    expect((await postWebhook(`https://127.0.0.1:${port}/ok`, '{}', {}, { ...local, policy: { allowHttpAndLoopback: false } })).error).toBe('refused: a loopback address');
    expect((await postWebhook('http://10.0.0.7/ok', '{}', {}, local)).error).toBe('refused: a private, link-local or reserved address');
    // A name whose DNS answers include a private address is refused, even with a public one beside it.
    const rebinding: Resolver = (_host, callback) => callback(null, [{ address: '93.184.216.34', family: 4 }, { address: '169.254.169.254', family: 4 }]);
    const viaDns = await postWebhook(`http://hooks.example.test:${port}/ok`, '{}', {}, { ...local, resolver: rebinding });
    expect(viaDns.statusCode).toBeNull();
    expect(viaDns.error).toBe('refused: hooks.example.test resolves to a private, link-local or reserved address');
    // An IPv6 transition address (6to4 of a private IPv4, NAT64, Teredo) in the answers is refused too.
    for (const address of ['2002:a00:1::1', '64:ff9b:1::a00:1', '2001:0:4136:e378::1', '::a00:1']) {
      const transition: Resolver = (_host, callback) => callback(null, [{ address, family: 6 }]);
      const refused = await postWebhook(`http://hooks.example.test:${port}/ok`, '{}', {}, { ...local, resolver: transition });
      expect({ address, statusCode: refused.statusCode, refused: refused.error?.startsWith('refused: hooks.example.test resolves to ') }).toEqual({ address, statusCode: null, refused: true });
    }
    // A name that resolves to loopback connects where the setting allows loopback.
    const toLoopback: Resolver = (_host, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    expect(await postWebhook(`http://hooks.example.test:${port}/ok`, '{}', {}, { ...local, resolver: toLoopback })).toMatchObject({ statusCode: 200 });
    expect(seen.length).toBe(before + 1);
  });
});
