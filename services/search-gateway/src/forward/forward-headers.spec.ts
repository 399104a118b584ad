import { clientResponseHeaders, upstreamRequestHeaders } from './forward-headers';

describe('upstreamRequestHeaders', () => {
  const context = { internalToken: 'token-of-sixteen+', requestId: 'req_1', clientIp: '10.0.0.9', identity: { accountId: 'acct_1', keyId: 'key_1', kind: 'api' as const } };

  it('strips spoofed x-svc-* headers, hop-by-hop fields, Host, Content-Length and Authorization, and adds the internal headers', () => {
    const out = upstreamRequestHeaders({
      host: 'gw', 'content-length': '3', authorization: 'Bearer svc-secret', connection: 'keep-alive, x-drop-me', 'x-drop-me': '1',
      'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked', 'x-svc-account-id': 'acct_evil', 'x-svc-internal-token': 'guess',
      cookie: 'sid=1', 'x-csrf-token': 'csrf', 'stripe-signature': 't=1,v1=abc', 'content-type': 'application/json',
    }, context);
    expect(out).toEqual({
      cookie: 'sid=1', 'x-csrf-token': 'csrf', 'stripe-signature': 't=1,v1=abc', 'content-type': 'application/json',
      'x-forwarded-for': '10.0.0.9', 'x-svc-internal-token': 'token-of-sixteen+', 'x-svc-request-id': 'req_1',
      'x-svc-account-id': 'acct_1', 'x-svc-key-id': 'key_1', 'x-svc-key-kind': 'api',
    });
  });

  it('sends no identity headers on unauthenticated routes and appends to x-forwarded-for', () => {
    const out = upstreamRequestHeaders({ 'x-svc-key-id': 'key_evil', 'x-forwarded-for': '1.2.3.4' }, { ...context, identity: null });
    expect(out['x-svc-key-id']).toBeUndefined();
    expect(out['x-svc-account-id']).toBeUndefined();
    expect(out['x-forwarded-for']).toBe('1.2.3.4, 10.0.0.9');
  });
});

describe('clientResponseHeaders', () => {
  it('extracts changed key hashes, never passes x-svc-* or hop-by-hop headers, keeps Set-Cookie', () => {
    const hash = 'a'.repeat(64);
    const result = clientResponseHeaders({
      'x-svc-changed-key-hash': `${hash}, not-a-hash`, 'x-svc-request-id': 'req_other', 'transfer-encoding': 'chunked',
      'content-length': '10', 'set-cookie': ['a=1', 'b=2'], 'content-type': 'application/json', etag: '"1"',
    });
    expect(result.changedKeyHashes).toEqual([hash]);
    expect(result.headers).toEqual({ 'set-cookie': ['a=1', 'b=2'], 'content-type': 'application/json', etag: '"1"' });
  });
});
