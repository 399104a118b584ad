import Redis from 'ioredis';
import { redisEndpoint } from './redis-batch';

/** The batch connection reaches the same Redis as the ioredis client, as REDIS_URL names it. */
describe('redisEndpoint', () => {
  const endpointOf = (url: string): ReturnType<typeof redisEndpoint> => {
    const client = new Redis(url, { lazyConnect: true });
    try {
      return redisEndpoint(client);
    } finally {
      client.disconnect();
    }
  };

  it('takes host, port and database, and no credentials or TLS when the URL has none', () => {
    expect(endpointOf('redis://127.0.0.1:6379/3')).toEqual({ host: '127.0.0.1', port: 6379, db: 3 });
  });

  it('takes user and password (decoded) and TLS from a rediss:// URL', () => {
    expect(endpointOf('rediss://alice:s3cr%40t@redis.example.com:6380/5')).toEqual({
      host: 'redis.example.com', port: 6380, db: 5, username: 'alice', password: 's3cr@t', tls: {},
    });
  });

  it('takes a password without a user (AUTH with the password alone)', () => {
    const endpoint = endpointOf('redis://:onlypass@10.0.0.1');
    expect(endpoint).toMatchObject({ host: '10.0.0.1', port: 6379, db: 0, password: 'onlypass' });
    expect(endpoint.username ?? '').toBe('');
  });
});
