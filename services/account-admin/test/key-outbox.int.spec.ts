import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Redis } from 'ioredis';
import type { Client } from 'pg';
import { KEY_CHANGES_CHANNEL, isKeyChangeMessage, redisKeys } from '@svc/contracts';
import type { KeyChangeMessage } from '@svc/contracts';
import { newId } from '@svc/ids';
import { generateSecret, hashSecret, labelOf } from '@svc/keys';
import { freePort, REDIS_BASE_URL, redisUrl, TcpProxy, waitFor } from '@svc/test-kit';
import { createApp } from '../src/app';
import type { AppConfig } from '../src/config';
import { DatabaseRepository } from '../src/db/database.repository';
import { KeyCacheRepository } from '../src/key-cache/key-cache.repository';
import { KeyCacheService } from '../src/key-cache/key-cache.service';
import { KeyOutboxRepository } from '../src/key-cache/key-outbox.repository';
import { KeyOutboxService } from '../src/key-cache/key-outbox.service';
import { createLogger } from '../src/logging/logger';
import { call, gatewayHeaders, insertAccount, startHarness } from './harness';
import type { Harness, Identity } from './harness';

const REDIS_DB = 9;
const RECORD_TTL_SECONDS = 1234;

/** Every key-change message seen on the channel (shared by all Redis databases). */
const messages: KeyChangeMessage[] = [];
let subscriber: Redis;
let direct: Redis;

beforeAll(async () => {
  direct = new Redis(redisUrl(REDIS_DB));
  subscriber = new Redis(redisUrl(REDIS_DB));
  subscriber.on('message', (_channel: string, text: string) => {
    const parsed: unknown = JSON.parse(text);
    if (isKeyChangeMessage(parsed)) messages.push(parsed);
  });
  await subscriber.subscribe(KEY_CHANGES_CHANNEL);
});

afterAll(async () => {
  await subscriber.quit();
  await direct.quit();
});

interface StoredJson {
  id: string;
  version: number;
  disabled: boolean;
  deleted: boolean;
  writtenAtMs?: unknown;
}

async function stored(keyHash: string): Promise<StoredJson | null> {
  const text = await direct.get(redisKeys.keyRecord(keyHash));
  return text === null ? null : (JSON.parse(text) as StoredJson);
}

function messagesFor(keyId: string): number[] {
  return messages.filter((m) => m.keyId === keyId).map((m) => m.version);
}

async function outboxRows(pg: Client, keyHash?: string): Promise<number> {
  const result = keyHash === undefined
    ? await pg.query<{ n: string }>('SELECT count(*) AS n FROM key_cache_outbox')
    : await pg.query<{ n: string }>('SELECT count(*) AS n FROM key_cache_outbox WHERE key_hash = $1', [keyHash]);
  return Number(result.rows[0]?.n);
}

async function createKey(h: Harness, owner: Identity, body: unknown = {}): Promise<{ id: string; keyHash: string }> {
  const response = await call(h.baseUrl, 'POST', '/v1/keys', { json: body, headers: gatewayHeaders(owner) });
  expect(response.status).toBe(201);
  return { id: String(response.body.id), keyHash: hashSecret(String(response.body.secret)) };
}

/** A key row written straight into Postgres, as a crash after the commit would leave it. */
async function insertKeyRow(pg: Client, accountId: string): Promise<{ id: string; keyHash: string }> {
  const secret = generateSecret('api');
  const id = newId('apiKey');
  const keyHash = hashSecret(secret);
  await pg.query(
    `INSERT INTO keys (id, account_id, kind, name, key_hash, label, updated_at) VALUES ($1, $2, 'api', '', $3, $4, now())`,
    [id, accountId, keyHash, labelOf(secret)],
  );
  return { id, keyHash };
}

function managementCaller(accountId: string): Identity {
  return { accountId, keyId: newId('managementKey'), kind: 'management' };
}

describe('key changes through the outbox (service Redis behind a cuttable relay)', () => {
  let h: Harness;
  let proxy: TcpProxy;
  let owner: Identity;

  beforeAll(async () => {
    const target = new URL(REDIS_BASE_URL);
    proxy = new TcpProxy(await freePort(), { host: target.hostname, port: Number(target.port || '6379') });
    await proxy.open();
    h = await startHarness('outbox', {
      REDIS_URL: `redis://127.0.0.1:${proxy.port}/${REDIS_DB}`,
      KEY_OUTBOX_INTERVAL_MS: '50',
      KEY_RECORD_TTL_SECONDS: String(RECORD_TTL_SECONDS),
    }, REDIS_DB);
    owner = managementCaller(await insertAccount(h.pg));
  });

  afterAll(async () => {
    await proxy.open().catch(() => undefined);
    await h.close();
    await proxy.cut();
  });

  it('writes live records with KEY_RECORD_TTL_SECONDS, tombstones for 7 days, and stamps writtenAtMs on every write', async () => {
    const before = Date.now();
    const key = await createKey(h, owner);
    const after = Date.now();
    const record = await stored(key.keyHash);
    expect(record).toMatchObject({ id: key.id, version: 1, deleted: false });
    expect(typeof record?.writtenAtMs).toBe('number');
    expect(record?.writtenAtMs).toBeGreaterThanOrEqual(before);
    expect(record?.writtenAtMs).toBeLessThanOrEqual(after);
    const ttl = await direct.ttl(redisKeys.keyRecord(key.keyHash));
    expect(ttl).toBeGreaterThan(RECORD_TTL_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(RECORD_TTL_SECONDS);

    expect((await call(h.baseUrl, 'DELETE', `/v1/keys/${key.id}`, { headers: gatewayHeaders(owner) })).status).toBe(200);
    expect(await stored(key.keyHash)).toMatchObject({ version: 2, deleted: true, writtenAtMs: expect.any(Number) });
    expect(await direct.ttl(redisKeys.keyRecord(key.keyHash))).toBeGreaterThan(6 * 24 * 3600);
    await waitFor('outbox emptied', async () => ((await outboxRows(h.pg, key.keyHash)) === 0 ? true : undefined));
  });

  it('a key change and its outbox row commit together: a change that fails leaves no row, a failing row insert leaves no change', async () => {
    const key = await createKey(h, owner);
    await waitFor('outbox emptied', async () => ((await outboxRows(h.pg)) === 0 ? true : undefined));

    const missing = await call(h.baseUrl, 'PATCH', `/v1/keys/${newId('apiKey')}`, { json: { disabled: true }, headers: gatewayHeaders(owner) });
    expect(missing.status).toBe(404);
    expect(await outboxRows(h.pg)).toBe(0);

    // Make the outbox insert itself fail: the key update in the same transaction must roll back.
    await h.pg.query('ALTER TABLE key_cache_outbox ADD CONSTRAINT test_refuse_rows CHECK (version < 0) NOT VALID');
    try {
      const refused = await call(h.baseUrl, 'PATCH', `/v1/keys/${key.id}`, { json: { disabled: true }, headers: gatewayHeaders(owner) });
      expect(refused.status).toBe(500);
      const deleted = await call(h.baseUrl, 'DELETE', `/v1/keys/${key.id}`, { headers: gatewayHeaders(owner) });
      expect(deleted.status).toBe(500);
    } finally {
      await h.pg.query('ALTER TABLE key_cache_outbox DROP CONSTRAINT test_refuse_rows');
    }
    const row = await h.pg.query<{ version: number; disabled: boolean; deleted_at: Date | null }>(
      'SELECT version, disabled, deleted_at FROM keys WHERE id = $1', [key.id],
    );
    expect(row.rows[0]).toEqual({ version: 1, disabled: false, deleted_at: null });
    expect(await outboxRows(h.pg)).toBe(0);
    expect(await stored(key.keyHash)).toMatchObject({ version: 1, disabled: false });
  });

  it('with Redis refusing the write a delete still commits; once Redis is back the loop writes the newest record and publishes it', async () => {
    const key = await createKey(h, owner);
    await waitFor('outbox emptied', async () => ((await outboxRows(h.pg)) === 0 ? true : undefined));
    await proxy.cut();
    try {
      const deleted = await call(h.baseUrl, 'DELETE', `/v1/keys/${key.id}`, { headers: gatewayHeaders(owner) });
      expect(deleted.status).toBe(200);
      expect(deleted.headers.get('x-svc-changed-key-hash')).toBe(key.keyHash);
      // Committed, but Redis still holds the live record: the outbox row is what remains.
      expect(await outboxRows(h.pg, key.keyHash)).toBe(1);
      expect(await stored(key.keyHash)).toMatchObject({ version: 1, deleted: false });
      expect(messagesFor(key.id)).not.toContain(2);
    } finally {
      await proxy.open();
    }
    await waitFor('the tombstone in Redis', async () => ((await stored(key.keyHash))?.deleted === true ? true : undefined));
    expect(await stored(key.keyHash)).toMatchObject({ id: key.id, version: 2, deleted: true, writtenAtMs: expect.any(Number) });
    await waitFor('the change message', () => (messagesFor(key.id).includes(2) ? true : undefined));
    await waitFor('outbox emptied', async () => ((await outboxRows(h.pg, key.keyHash)) === 0 ? true : undefined));
    expect(await direct.ttl(redisKeys.keyRecord(key.keyHash))).toBeGreaterThan(6 * 24 * 3600);
  });

  it('two replicas draining at once write and publish every pending record exactly once, at its current version', async () => {
    const accountId = await insertAccount(h.pg);
    const keys: { id: string; keyHash: string }[] = [];
    // All rows appear in one commit, so the loops race for the same batch.
    await h.pg.query('BEGIN');
    for (let i = 0; i < 250; i++) {
      const key = await insertKeyRow(h.pg, accountId);
      await h.pg.query('UPDATE keys SET disabled = true, version = 2 WHERE id = $1', [key.id]);
      await h.pg.query('INSERT INTO key_cache_outbox (key_hash, version) VALUES ($1, 1), ($1, 2)', [key.keyHash]);
      keys.push(key);
    }
    const replicas = [replica(h.config), replica(h.config)];
    await h.pg.query('COMMIT');
    try {
      await Promise.all(replicas.map((r) => r.loop.drain()));
      // The harness's own loop is a third replica: wait until it too is done.
      await waitFor('outbox emptied', async () => ((await outboxRows(h.pg)) === 0 ? true : undefined));
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
    }
    for (const key of keys) {
      expect(await stored(key.keyHash)).toMatchObject({ id: key.id, version: 2, disabled: true });
      expect(messagesFor(key.id)).toEqual([2]);
    }
  });
});

/** A second account-admin's outbox loop: its own Postgres pool and Redis connection (direct). */
function replica(config: AppConfig): { loop: KeyOutboxService; close(): Promise<void> } {
  const own: AppConfig = { ...config, REDIS_URL: redisUrl(REDIS_DB) };
  const logger = createLogger(own.LOG_LEVEL);
  const db = new DatabaseRepository(own);
  const redis = new KeyCacheRepository(own);
  const outbox = new KeyOutboxRepository(db);
  const loop = new KeyOutboxService(outbox, new KeyCacheService(redis, outbox, logger), own, logger);
  return {
    loop,
    async close() {
      await loop.onApplicationShutdown();
      await redis.onApplicationShutdown();
      await db.onApplicationShutdown();
    },
  };
}

describe('a crash between the commit and the Redis write', () => {
  it('is healed on start: the outbox loop writes the current record and publishes it before its first interval', async () => {
    const h = await startHarness('outbox_crash', { KEY_OUTBOX_INTERVAL_MS: '60000' }, REDIS_DB);
    let restarted: NestFastifyApplication | null = null;
    try {
      const owner = managementCaller(await insertAccount(h.pg));
      const key = await createKey(h, owner);
      expect(await stored(key.keyHash)).toMatchObject({ version: 1, disabled: false });
      await h.app.close();
      // What a crash right after the commit leaves: the change and its outbox row, nothing in Redis.
      await h.pg.query('BEGIN');
      await h.pg.query('UPDATE keys SET disabled = true, version = 2, updated_at = now() WHERE id = $1', [key.id]);
      await h.pg.query('INSERT INTO key_cache_outbox (key_hash, version) VALUES ($1, 2)', [key.keyHash]);
      await h.pg.query('COMMIT');
      expect(await stored(key.keyHash)).toMatchObject({ version: 1, disabled: false });

      const beforeStart = Date.now();
      restarted = await createApp({ ...h.config, PORT: await freePort(), GRPC_PORT: await freePort() }, createLogger(h.config.LOG_LEVEL));
      await restarted.init();
      await waitFor('the current record in Redis', async () => ((await stored(key.keyHash))?.version === 2 ? true : undefined));
      const record = await stored(key.keyHash);
      expect(record).toMatchObject({ id: key.id, version: 2, disabled: true });
      expect(record?.writtenAtMs).toBeGreaterThanOrEqual(beforeStart);
      await waitFor('the change message', () => (messagesFor(key.id).includes(2) ? true : undefined));
      await waitFor('outbox emptied', async () => ((await outboxRows(h.pg)) === 0 ? true : undefined));
    } finally {
      await restarted?.close();
      h.grpc.close();
      await h.pg.end();
      await h.redis.quit();
    }
  });
});
