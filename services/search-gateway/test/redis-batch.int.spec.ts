import { Redis } from 'ioredis';
import { redisUrl } from '@svc/test-kit';
import { parseRedisEndpoint } from '@svc/redis-client';
import { MERGED_SADD, MERGED_ZREM, pickElement, RedisBatch } from '../src/redis/redis-batch';
import type { MergedCommand } from '../src/redis/redis-batch';
import { RespConnection } from '../src/redis/resp-connection';
import type { MeasuredText } from '../src/redis/resp-connection';

/** Pipelines of concurrent searches share one write to Redis and keep their own replies. */
describe('RedisBatch on a real Redis', () => {
  let redis: Redis;
  let batch: RedisBatch;
  let writes = 0;

  beforeAll(async () => {
    redis = new Redis(redisUrl(2), { lazyConnect: true, enableOfflineQueue: false });
    await redis.connect();
    // The batch's own connection, its writes counted (one send is one socket write).
    const connection = new RespConnection(parseRedisEndpoint(redisUrl(2)));
    const send = connection.send.bind(connection);
    connection.send = (...args: Parameters<RespConnection['send']>) => {
      writes += 1;
      send(...args);
    };
    batch = new RedisBatch(connection);
    batch.defineScript('testEcho', { numberOfKeys: 1, lua: "return {KEYS[1], ARGV[1]}" });
  });

  afterAll(async () => {
    batch.close();
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

  it('writes measured texts (a cache entry) in place among the text of concurrent pipelines, in one write', async () => {
    const before = writes;
    const value = (i: number): string => `${i}|é ✓ ${'x'.repeat(i * 100)}`;
    const measured = (text: string): MeasuredText => ({ text, byteLength: Buffer.byteLength(text) });
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      batch.pipeline().add('set', `batch:bytes:${i}`, measured(value(i)), 'PX', 60_000).add('testEcho', `k${i}`, `a${i}`).add('get', `batch:bytes:${i}`).exec()));
    replies.forEach((reply, i) => {
      expect(reply).toEqual([[null, 'OK'], [null, [`k${i}`, `a${i}`]], [null, value(i)]]);
    });
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

  it('gives a command Redis does not know its own error (Redis decides, as for any command) and still answers the others', async () => {
    const [unknown, known] = await Promise.all([
      batch.pipeline().add('noSuchCommand', 'x').exec(),
      batch.pipeline().add('ping').exec(),
    ]);
    expect(unknown[0]?.[0]?.message).toMatch(/unknown command/i);
    expect(known).toEqual([[null, 'PONG']]);
  });

  it('send() tells when the pipeline is on the socket, before Redis answers it', async () => {
    const order: string[] = [];
    const sent = batch.pipeline().add('set', 'batch:test:sent', 'v').add('get', 'batch:test:sent').send();
    const written = sent.written.then((onSocket) => order.push(`written ${String(onSocket)}`));
    const replies = sent.replies.then((r) => order.push(`answered ${String(r[1]?.[1])}`));
    await Promise.all([written, replies]);
    expect(order).toEqual(['written true', 'answered v']);
  });

  it('send() on a connection that is not up says it is not on the socket, and the replies fail', async () => {
    const offlineBatch = new RedisBatch({ url: 'redis://127.0.0.1:1', cluster: false });
    const sent = offlineBatch.pipeline().add('ping').send();
    expect(await sent.written).toBe(false);
    // Each command of a batch that could not be written gets the connection's error.
    const outcome = await sent.replies.then((replies) => replies[0]?.[0] ?? null, (error: unknown) => error);
    expect(outcome).toBeInstanceOf(Error);
    offlineBatch.close();
  });

  it('merges members of concurrent pipelines into one command per key, and gives each pipeline its own share of the reply', async () => {
    const before = writes;
    const commands: string[] = [];
    const monitor = await redis.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0] === 'zrem' || args[0] === 'sadd' || args.includes('batch:test:many')) commands.push(args.join(' '));
    });
    batch.defineScript('testMany', { numberOfKeys: 1, lua: 'local out = {} for i = 2, #ARGV do out[#out + 1] = ARGV[1] .. ARGV[i] end return out' });
    const many: MergedCommand = { command: 'testMany', stage: 'tail', order: 1, dynamicKeys: false, unique: false, pick: (reply, i) => (reply as string[])[i] };
    await redis.zadd('batch:test:z', 1, 'a', 2, 'b', 3, 'c');
    const replies = await Promise.all(['a', 'b', 'b', 'c'].map((member, i) =>
      batch.pipeline()
        .merge(MERGED_ZREM, ['batch:test:z'], [], [member])
        .add('get', 'batch:test:none')
        .merge(many, ['batch:test:many'], ['x-'], [`m${i}`])
        .merge(MERGED_SADD, ['batch:test:s'], [], [member])
        .exec()));
    expect(replies).toEqual([
      [[null, null], [null, null], [null, 'x-m0'], [null, null]],
      [[null, null], [null, null], [null, 'x-m1'], [null, null]],
      [[null, null], [null, null], [null, 'x-m2'], [null, null]],
      [[null, null], [null, null], [null, 'x-m3'], [null, null]],
    ]);
    expect(writes - before).toBeLessThanOrEqual(2);
    expect(await redis.zcard('batch:test:z')).toBe(0);
    expect((await redis.smembers('batch:test:s')).sort()).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < 100 && commands.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    monitor.disconnect();
    // One call each, members of every pipeline in it (given once each for ZREM and SADD).
    expect(commands.filter((c) => c.startsWith('zrem'))).toEqual(['zrem batch:test:z a b c']);
    expect(commands.filter((c) => c.startsWith('sadd'))).toEqual(['sadd batch:test:s a b c']);
    expect(commands.filter((c) => c.includes('batch:test:many'))).toEqual([expect.stringMatching(/ batch:test:many x- m0 m1 m2 m3$/)]);
  });

  it('sends head-merged commands before, and tail-merged ones after, every pipeline\'s own commands', async () => {
    await redis.del('batch:test:order');
    const [first, second] = await Promise.all([
      batch.pipeline().add('rpush', 'batch:test:order', 'own-1').merge(MERGED_SADD, ['batch:test:tail'], [], ['x']).exec(),
      batch.pipeline().merge(MERGED_ZREM, ['batch:test:head'], [], ['y']).add('rpush', 'batch:test:order', 'own-2').exec(),
    ]);
    expect(first?.[0]).toEqual([null, 1]);
    expect(second?.[1]).toEqual([null, 2]);
    expect(await redis.lrange('batch:test:order', 0, -1)).toEqual(['own-1', 'own-2']);
  });

  it('merges a script whose members bring keys of their own into one call with the keys counted, and fails one member alone on its own error', async () => {
    batch.defineScript('testKeyed', {
      lua: "local out = {} for i = 2, #KEYS do if ARGV[i] == 'bad' then out[#out + 1] = {'err', 'bad member'} else out[#out + 1] = KEYS[1] .. '/' .. KEYS[i] .. '=' .. ARGV[1] .. ARGV[i] end end return out",
    });
    const keyed: MergedCommand = { command: 'testKeyed', stage: 'tail', order: 1, dynamicKeys: true, unique: false, pick: pickElement };
    const replies = await Promise.all(['a', 'bad', 'c'].map((arg, i) =>
      batch.pipeline().merge(keyed, ['{t}:shared'], ['x-'], [arg], [`{t}:own${i}`]).exec()));
    expect(replies[0]).toEqual([[null, '{t}:shared/{t}:own0=x-a']]);
    expect(replies[1]?.[0]?.[0]).toEqual(new Error('bad member'));
    expect(replies[2]).toEqual([[null, '{t}:shared/{t}:own2=x-c']]);
  });

  it('sends tail-merged commands in their order, whatever order the pipelines gave them in', async () => {
    await redis.del('batch:test:ordered');
    const late: MergedCommand = { command: 'rpush', stage: 'tail', order: 9, dynamicKeys: false, unique: false, pick: () => null };
    const early: MergedCommand = { command: 'lpush', stage: 'tail', order: 1, dynamicKeys: false, unique: false, pick: () => null };
    await Promise.all([
      batch.pipeline().merge(late, ['batch:test:ordered'], [], ['last']).exec(),
      batch.pipeline().merge(early, ['batch:test:ordered'], [], ['first']).exec(),
    ]);
    // lpush ran first (order 1) on an empty list, then rpush (order 9).
    expect(await redis.lrange('batch:test:ordered', 0, -1)).toEqual(['first', 'last']);
  });

  it('gives a merged command\'s error to every pipeline that had a member in it', async () => {
    await redis.set('batch:test:notaset', 'x');
    const replies = await Promise.all(['p', 'q'].map((member) => batch.pipeline().merge(MERGED_SADD, ['batch:test:notaset'], [], [member]).add('ping').exec()));
    for (const reply of replies) {
      expect(reply[0]?.[0]).toBeInstanceOf(Error);
      expect(reply[1]).toEqual([null, 'PONG']);
    }
  });

  it('fails every queued command at once when Redis is unreachable, instead of waiting', async () => {
    const connectionErrors: Error[] = [];
    const offlineBatch = new RedisBatch({ url: 'redis://127.0.0.1:1', cluster: false }, (error) => connectionErrors.push(error));
    const outcome = await offlineBatch.pipeline().add('ping').exec().then(
      (replies) => replies[0]?.[0] ?? null,
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(Error);
    // The batch connection's own failure is reported (MoneyRepository logs it).
    expect(connectionErrors.length).toBeGreaterThan(0);
    offlineBatch.close();
  });
});
