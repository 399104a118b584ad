import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedLookup, refusedAddressOf, RefusedAddressError } from './guarded-lookup';
import type { Resolver } from './guarded-lookup';

/** The socket's own lookup, over real connections to a loopback HTTP server. */
describe('guardedLookup', () => {
  let server: Server;
  let port = 0;
  let served = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      served++;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const answering = (...addresses: string[]): Resolver => (_hostname, callback) => callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

  /** GET http://<host>:<port>/ with the lookup; the status, or the error. */
  function get(host: string, lookup: ReturnType<typeof guardedLookup>): Promise<number | Error> {
    return new Promise((resolve) => {
      const req = request({ host, port, path: '/', lookup, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', resolve);
      req.end();
    });
  }

  it('connects to an address it checked and allowed', async () => {
    const before = served;
    expect(await get('receiver.example.test', guardedLookup('public-and-loopback', answering('127.0.0.1')))).toBe(204);
    expect(served).toBe(before + 1);
  });

  it('refuses the connection when any answer is refused, before a byte is sent', async () => {
    const before = served;
    for (const [reach, answers] of [
      ['public', ['127.0.0.1']],
      ['public-and-loopback', ['127.0.0.1', '10.0.0.1']],
      ['public-and-loopback', ['93.184.216.34', '2002:a00:1::1']],
      ['public-and-loopback', ['64:ff9b:1::7f00:1']],
    ] as const) {
      const outcome = await get('receiver.example.test', guardedLookup(reach, answering(...answers)));
      expect(outcome).toBeInstanceOf(RefusedAddressError);
      expect(refusedAddressOf(outcome)?.hostname).toBe('receiver.example.test');
      expect((outcome as Error).message).toMatch(/^receiver\.example\.test resolves to /);
    }
    expect(served).toBe(before);
  });

  it('checks what the system resolver answers for localhost', async () => {
    const outcome = await get('localhost', guardedLookup('public'));
    expect(refusedAddressOf(outcome)?.reason).toBe('a loopback address');
    expect(await get('localhost', guardedLookup('public-and-loopback'))).toBe(204);
  });

  it('answers only the family asked for, and passes a resolver error on', async () => {
    const lookup = guardedLookup('any', answering('::1', '127.0.0.1'));
    const asked = (options: object): Promise<unknown> => new Promise((resolve) => lookup('x.test', options, (error, address) => resolve(error ?? address)));
    expect(await asked({ family: 4 })).toBe('127.0.0.1');
    expect(await asked({ family: 6, all: true })).toEqual([{ address: '::1', family: 6 }]);
    expect(await asked({ all: true })).toHaveLength(2);
    const failing: Resolver = (_hostname, callback) => callback(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }), []);
    const error = await new Promise<unknown>((resolve) => guardedLookup('public', failing)('x.test', {}, (e) => resolve(e)));
    expect(error).toMatchObject({ code: 'ENOTFOUND' });
    expect(refusedAddressOf(new Error('wrapped', { cause: new RefusedAddressError('x.test', 'a loopback address') }))?.reason).toBe('a loopback address');
    expect(refusedAddressOf(error)).toBeNull();
  });
});
