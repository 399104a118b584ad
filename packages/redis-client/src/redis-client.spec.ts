import { Cluster, Redis } from 'ioredis';
import { createRedisClient, parseRedisEndpoint, redisEndpoints, RedisUrlError, splitRedisUrls } from './redis-client';
import { keySlot } from './slots';

describe('parseRedisEndpoint', () => {
  it('takes host, port and database, and no credentials or TLS when the URL has none', () => {
    expect(parseRedisEndpoint('redis://127.0.0.1:6379/3')).toEqual({ host: '127.0.0.1', port: 6379, db: 3 });
  });

  it('takes user and password (decoded) and TLS from a rediss:// URL', () => {
    expect(parseRedisEndpoint('rediss://alice:s3cr%40t@redis.example.com:6380/5')).toEqual({
      host: 'redis.example.com', port: 6380, db: 5, username: 'alice', password: 's3cr@t', tls: {},
    });
  });

  it('takes a password without a user, and the default port', () => {
    expect(parseRedisEndpoint('redis://:onlypass@10.0.0.1')).toEqual({ host: '10.0.0.1', port: 6379, db: 0, password: 'onlypass' });
  });

  it('refuses another scheme without echoing the URL', () => {
    expect(() => parseRedisEndpoint('http://user:hunter2@x')).toThrow(RedisUrlError);
    expect(() => parseRedisEndpoint('http://user:hunter2@x')).not.toThrow(/hunter2/);
  });
});

describe('redisEndpoints', () => {
  it('splits a seed list, ignoring blanks around commas', () => {
    expect(splitRedisUrls(' redis://a:7000 ,redis://b:7001,, ')).toEqual(['redis://a:7000', 'redis://b:7001']);
    expect(redisEndpoints({ url: 'redis://a:7000,redis://b:7001', cluster: true }).map((e) => `${e.host}:${e.port}`)).toEqual(['a:7000', 'b:7001']);
  });

  it('refuses a list without REDIS_CLUSTER, a database in cluster mode, and seeds with different credentials', () => {
    expect(() => redisEndpoints({ url: 'redis://a:7000,redis://b:7001', cluster: false })).toThrow(/REDIS_CLUSTER=true/);
    expect(() => redisEndpoints({ url: 'redis://a:7000/2', cluster: true })).toThrow(/database 0 only/);
    expect(() => redisEndpoints({ url: 'redis://:x@a:7000,redis://:y@b:7001', cluster: true })).toThrow(/same credentials/);
  });
});

describe('createRedisClient', () => {
  it('makes a single-node client, or a Cluster client for REDIS_CLUSTER=true', () => {
    const single = createRedisClient({ url: 'redis://127.0.0.1:1/4', cluster: false }, { lazyConnect: true });
    const cluster = createRedisClient({ url: 'redis://127.0.0.1:1,redis://127.0.0.1:2', cluster: true }, { lazyConnect: true, maxRetriesPerRequest: null });
    try {
      expect(single).toBeInstanceOf(Redis);
      expect((single as Redis).options.db).toBe(4);
      expect(cluster).toBeInstanceOf(Cluster);
      // Per-node options reach every node's connection (BullMQ checks maxRetriesPerRequest there).
      expect((cluster as Cluster).options.redisOptions?.maxRetriesPerRequest).toBeNull();
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
  });
});

describe('keySlot', () => {
  it('hashes the hash tag alone when a key has one (Redis Cluster\'s rule)', () => {
    expect(keySlot('{a:acc_1}:bal')).toBe(keySlot('{a:acc_1}:settle'));
    expect(keySlot('{a:acc_1}:bal')).toBe(keySlot('a:acc_1'));
    // Known values from Redis's CLUSTER KEYSLOT.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
  });
});
