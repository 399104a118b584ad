import { Redis } from 'ioredis';
import { redisUrl } from '@svc/test-kit';
import { parseRedisEndpoint } from '@svc/redis-client';
import { RedisBatch } from '../src/redis/redis-batch';
import { encodeCommand, RespConnection, RespConnectionError } from '../src/redis/resp-connection';
import type { RespEndpoint, RespReply } from '../src/redis/resp-connection';

/**
 * The gateway's batch connection on the real Redis (database 2, the gateway's): handshake,
 * failure and reconnection, and scripts flushed from Redis while it runs.
 */
const DB = 2;

function request(connection: RespConnection, ...commands: (readonly (string | number)[])[]): { written: Promise<boolean>; replies: Promise<(RespReply | RespConnectionError)[]> } {
  let written: (onSocket: boolean) => void = () => undefined;
  const writtenPromise = new Promise<boolean>((resolve) => {
    written = resolve;
  });
  const handlers: ((reply: RespReply | RespConnectionError) => void)[] = [];
  const replies = commands.map(() => new Promise<RespReply | RespConnectionError>((resolve) => {
    handlers.push(resolve);
  }));
  connection.send(commands.map(([name, ...args]) => encodeCommand(String(name), args)).join(''), handlers, written);
  return { written: writtenPromise, replies: Promise.all(replies) };
}

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** CLIENT KILL of every connection with this name (the batch connection's, by its CLIENT SETNAME). */
async function killByName(redis: Redis, name: string): Promise<number> {
  const list = (await redis.client('LIST')) as string;
  const ids = list.split('\n').filter((line) => line.includes(` name=${name} `)).map((line) => /id=(\d+)/.exec(line)?.[1]).filter((id): id is string => id !== undefined);
  for (const id of ids) await redis.client('KILL', 'ID', id);
  return ids.length;
}

describe('RespConnection on a real Redis', () => {
  let redis: Redis;
  let endpoint: RespEndpoint;
  const opened: RespConnection[] = [];
  const open = (at: RespEndpoint, name: string, errors?: Error[]): RespConnection => {
    const connection = new RespConnection(at, { clientName: name, retryBaseMs: 20, retryMaxMs: 100, ...(errors === undefined ? {} : { onError: (error) => errors.push(error) }) });
    opened.push(connection);
    return connection;
  };

  beforeAll(async () => {
    redis = new Redis(redisUrl(DB), { lazyConnect: true });
    await redis.connect();
    endpoint = parseRedisEndpoint(redisUrl(DB));
  });

  afterAll(async () => {
    for (const connection of opened) connection.close();
    await redis.quit();
  });

  it('selects the database of the endpoint before the first command', async () => {
    expect(endpoint.db).toBe(DB);
    const connection = open(endpoint, 'svc-test-select');
    const sent = request(connection, ['set', 'resp:test:db', 'here'], ['get', 'resp:test:db']);
    expect(await sent.written).toBe(true);
    expect(await sent.replies).toEqual(['OK', 'here']);
    expect(await redis.get('resp:test:db')).toBe('here');
    const zero = new Redis(redisUrl(0), { lazyConnect: true });
    await zero.connect();
    expect(await zero.exists('resp:test:db')).toBe(0);
    await zero.quit();
  });

  it('fails the commands in flight when the connection drops, then reconnects by itself', async () => {
    const connection = open(endpoint, 'svc-test-drop');
    await until('the connection to be up', () => connection.status === 'ready');
    // BLPOP holds its reply back: the connection is killed while it waits.
    const blocked = request(connection, ['blpop', 'resp:test:nothing', 5]);
    expect(await blocked.written).toBe(true);
    await until('the blocked command to reach Redis', async () => ((await redis.client('LIST')) as string).includes('name=svc-test-drop') && ((await redis.client('LIST')) as string).includes('cmd=blpop'));
    expect(await killByName(redis, 'svc-test-drop')).toBe(1);
    const [reply] = await blocked.replies;
    expect(reply).toBeInstanceOf(RespConnectionError);
    await until('the connection to be back', () => connection.status === 'ready');
    expect(await request(connection, ['ping']).replies).toEqual(['PONG']);
  });

  it('refuses at once, without writing, while Redis cannot be reached', async () => {
    const errors: Error[] = [];
    const connection = open({ host: '127.0.0.1', port: 1, db: 0 }, 'svc-test-down', errors);
    await until('the first attempt to fail', () => connection.status === 'down');
    const sent = request(connection, ['ping'], ['ping']);
    expect(await sent.written).toBe(false);
    const replies = await sent.replies;
    expect(replies).toHaveLength(2);
    for (const reply of replies) expect(reply).toBeInstanceOf(RespConnectionError);
    expect(errors.length).toBeGreaterThan(0);
  });

  it('stays down when Redis refuses the handshake, and never puts the password in its errors', async () => {
    const errors: Error[] = [];
    const connection = open({ ...endpoint, password: 'not-the-password-4711' }, 'svc-test-auth', errors);
    await until('the handshake to be refused', () => errors.some((error) => error.message.includes('handshake')));
    expect(connection.status).not.toBe('ready');
    for (const error of errors) expect(error.message).not.toContain('not-the-password-4711');
  });

  it('fails what is in flight on close, and refuses everything after', async () => {
    const connection = open(endpoint, 'svc-test-close');
    await until('the connection to be up', () => connection.status === 'ready');
    const blocked = request(connection, ['blpop', 'resp:test:nothing', 5]);
    await blocked.written;
    connection.close();
    expect(connection.status).toBe('closed');
    expect((await blocked.replies)[0]).toBeInstanceOf(RespConnectionError);
    const after = request(connection, ['ping']);
    expect(await after.written).toBe(false);
    expect((await after.replies)[0]).toBeInstanceOf(RespConnectionError);
  });

  it('runs a script again after SCRIPT FLUSH (NOSCRIPT: sent whole once more), through RedisBatch', async () => {
    const connection = open(endpoint, 'svc-test-script');
    const batch = new RedisBatch(connection);
    batch.defineScript('testRespEcho', { numberOfKeys: 1, lua: 'return {KEYS[1], ARGV[1]}' });
    expect(await batch.pipeline().add('testRespEcho', 'k1', 'a1').exec()).toEqual([[null, ['k1', 'a1']]]);
    expect(await batch.pipeline().add('testRespEcho', 'k2', 'a2').exec()).toEqual([[null, ['k2', 'a2']]]);
    await redis.script('FLUSH');
    expect(await batch.pipeline().add('testRespEcho', 'k3', 'a3').exec()).toEqual([[null, ['k3', 'a3']]]);
    expect(await batch.pipeline().add('testRespEcho', 'k4', 'a4').exec()).toEqual([[null, ['k4', 'a4']]]);
  });

  it('gives each pipeline of a batch sent on a dropped connection an error, not an answer', async () => {
    const connection = open(endpoint, 'svc-test-batch-drop');
    const batch = new RedisBatch(connection);
    await until('the connection to be up', () => batch.status === 'ready');
    const pending = Promise.all([
      batch.pipeline().add('blpop', 'resp:test:nothing', 5).exec(),
      batch.pipeline().add('ping').exec(),
    ]);
    await until('the blocked command to reach Redis', async () => ((await redis.client('LIST')) as string).includes('cmd=blpop'));
    await killByName(redis, 'svc-test-batch-drop');
    const [first, second] = await pending;
    expect(first[0]?.[0]).toBeInstanceOf(RespConnectionError);
    expect(second[0]?.[0]).toBeInstanceOf(RespConnectionError);
  });
});
