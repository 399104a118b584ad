import { Redis } from 'ioredis';
import { redisUrl } from '@svc/test-kit';
import { RedisBatch } from '../src/redis/redis-batch';

/** Pipelines of concurrent searches share one write to Redis and keep their own replies. */
describe('RedisBatch on a real Redis', () => {
  let redis: Redis;
  let batch: RedisBatch;
  let writes = 0;

  beforeAll(async () => {
    redis = new Redis(redisUrl(2), { lazyConnect: true, enableOfflineQueue: false });
    await redis.connect();
    redis.defineCommand('testEcho', { numberOfKeys: 1, lua: "return {KEYS[1], ARGV[1]}" });
    batch = new RedisBatch(redis);
    const stream = (redis as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
    const write = stream.write.bind(stream);
    stream.write = (...args: unknown[]) => {
      writes += 1;
      return write(...args);
    };
  });

  afterAll(async () => {
    await redis.quit();
  });

  it('answers each of 200 concurrent pipelines with its own replies, in its own order', async () => {
    const before = writes;
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) =>
      batch.pipeline().add('set', `batch:test:${i}`, `v${i}`).add('testEcho', `k${i}`, `a${i}`).add('get', `batch:test:${i}`).exec()));
    replies.forEach((reply, i) => {
      expect(reply).toEqual([[null, 'OK'], [null, [`k${i}`, `a${i}`]], [null, `v${i}`]]);
    });
    // All 200 pipelines were queued in one turn of the event loop: one write, not 200.
    expect(writes - before).toBeLessThanOrEqual(2);
  });

  it('keeps a failing command to its own pipeline', async () => {
    await redis.set('batch:test:string', 'x');
    const [bad, good] = await Promise.all([
      batch.pipeline().add('incr', 'batch:test:string').exec(),
      batch.pipeline().add('incr', 'batch:test:counter').exec(),
    ]);
    expect(bad?.[0]?.[0]).toBeInstanceOf(Error);
    expect(good?.[0]?.[0]).toBeNull();
  });

  it('rejects a pipeline naming an unknown command and still answers the others', async () => {
    const [unknown, known] = await Promise.allSettled([
      batch.pipeline().add('noSuchCommand', 'x').exec(),
      batch.pipeline().add('ping').exec(),
    ]);
    expect(unknown.status).toBe('rejected');
    expect(known).toEqual({ status: 'fulfilled', value: [[null, 'PONG']] });
  });

  it('fails every queued command at once when Redis is unreachable, instead of waiting', async () => {
    const offline = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    offline.on('error', () => undefined);
    const offlineBatch = new RedisBatch(offline);
    const outcome = await offlineBatch.pipeline().add('ping').exec().then(
      (replies) => replies[0]?.[0] ?? null,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(Error);
    offline.disconnect();
  });
});
