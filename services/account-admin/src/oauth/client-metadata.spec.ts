import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAUTH_LIMITS } from '@svc/contracts';
import { checkDocument, checkRedirectUris, ClientMetadataFetcher, isClientIdUrl } from './client-metadata';

/** Client ID Metadata Documents: the server-side fetch's guards (SSRF) and the document's rules, over real sockets. */
describe('client metadata documents', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      const self = `${base}${request.url ?? ''}`;
      if (request.url === '/redirect.json') return void response.writeHead(302, { location: `${base}/ok.json` }).end();
      if (request.url === '/huge.json') return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_id: self, pad: 'x'.repeat(OAUTH_LIMITS.metadataDocumentBytes) }));
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_id: self, client_name: 'Local', redirect_uris: ['https://app.example/cb'] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('without the local setting, refuses loopback, private, link-local and reserved address literals before any request (the address policy\'s ranges)', async () => {
    const port = (server.address() as AddressInfo).port;
    const fetcher = new ClientMetadataFetcher(false);
    try {
      for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '[::1]', '[fe80::1]', '[fd00::1]', '[::ffff:127.0.0.1]']) {
        await expect(fetcher.fetch(`https://${address}:${port}/ok.json`)).rejects.toThrow('the client_id host is not a public address');
      }
    } finally {
      await fetcher.close();
    }
  });

  it('takes only https URLs with a path as client ids (http only with the local setting)', () => {
    expect(isClientIdUrl('https://app.example/oauth/client.json', false)).toBe(true);
    expect(isClientIdUrl('https://app.example/', false)).toBe(false);
    expect(isClientIdUrl('http://app.example/client.json', false)).toBe(false);
    expect(isClientIdUrl('http://app.example/client.json', true)).toBe(true);
    expect(isClientIdUrl('https://user:pw@app.example/client.json', false)).toBe(false);
    expect(isClientIdUrl('https://app.example/client.json#x', false)).toBe(false);
  });

  it('without the local setting, refuses loopback hosts by address and by name before any request is made', async () => {
    const fetcher = new ClientMetadataFetcher(false);
    try {
      const port = (server.address() as AddressInfo).port;
      await expect(fetcher.fetch(`https://127.0.0.1:${port}/ok.json`)).rejects.toThrow('the client_id host is not a public address');
      await expect(fetcher.fetch(`https://localhost:${port}/ok.json`)).rejects.toThrow('the client_id host does not resolve to a public address');
      await expect(fetcher.fetch(`https://[::1]:${port}/ok.json`)).rejects.toThrow('the client_id host is not a public address');
      await expect(fetcher.fetch(`${base}/ok.json`)).rejects.toThrow('client_id is not an https URL with a path');
    } finally {
      await fetcher.close();
    }
  });

  it('without the local setting, refuses the IPv6 transition ranges (IPv4-compatible, IPv4-mapped, 6to4, Teredo, NAT64), as literals and as DNS answers, before any request', async () => {
    const port = (server.address() as AddressInfo).port;
    const transition = ['::7f00:1', '::ffff:7f00:1', '2002:7f00:1::1', '2001:0:7f00:1::1', '64:ff9b::7f00:1', '64:ff9b:1::a00:1'];
    const answered: string[] = [];
    const fetcher = new ClientMetadataFetcher(false, (hostname, callback) => {
      answered.push(hostname);
      callback(null, [{ address: transition[answered.length - 1] ?? '::1', family: 6 }]);
    });
    try {
      for (const address of transition) {
        await expect(fetcher.fetch(`https://[${address}]:${port}/ok.json`)).rejects.toThrow('the client_id host is not a public address');
      }
      for (let i = 0; i < transition.length; i++) {
        await expect(fetcher.fetch(`https://metadata-${i}.example:${port}/ok.json`)).rejects.toThrow('the client_id host does not resolve to a public address');
      }
      expect(answered).toHaveLength(transition.length);
    } finally {
      await fetcher.close();
    }
  });

  it('with the local setting: fetches a document, but follows no redirect and stops at the size cap', async () => {
    const fetcher = new ClientMetadataFetcher(true);
    try {
      await expect(fetcher.fetch(`${base}/ok.json`)).resolves.toEqual({ clientId: `${base}/ok.json`, name: 'Local', redirectUris: ['https://app.example/cb'] });
      await expect(fetcher.fetch(`${base}/redirect.json`)).rejects.toThrow('answered HTTP 302');
      await expect(fetcher.fetch(`${base}/huge.json`)).rejects.toThrow('too large');
    } finally {
      await fetcher.close();
    }
  });

  it('checks the document: its own client_id, a public client, exact redirect URIs', () => {
    const id = 'https://app.example/client.json';
    expect(() => checkDocument(id, { client_id: 'https://other.example/c.json', redirect_uris: ['https://app.example/cb'] }, false)).toThrow('another client_id');
    expect(() => checkDocument(id, { client_id: id, redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, false)).toThrow('"none"');
    expect(checkDocument(id, { client_id: id, redirect_uris: ['https://app.example/cb'] }, false).name).toBe('app.example');
    expect(() => checkRedirectUris([], false)).toThrow('redirect_uris');
    expect(() => checkRedirectUris(['http://app.example/cb'], false)).toThrow('https');
    expect(() => checkRedirectUris(['https://app.example/cb#frag'], false)).toThrow('fragment');
    expect(checkRedirectUris(['http://127.0.0.1:3000/cb', 'com.example.app:/cb', 'https://app.example/cb'], false)).toHaveLength(3);
  });
});
