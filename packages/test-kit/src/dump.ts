import { Client } from 'pg';
import { scanKeys } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';

/** Every text a PostgreSQL database holds, one row a line (all tables of the public schema), for a search for secrets. */
export async function dumpDatabase(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    const lines: string[] = [];
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
      lines.push(...rows.rows.map((r) => `${table_name}: ${r.row}`));
    }
    return lines.join('\n');
  } finally {
    await client.end();
  }
}

/** Every key and value in a Redis (every master of a cluster), whatever their type, one key a line. */
export async function dumpRedis(redis: RedisClient): Promise<string> {
  const out: string[] = [];
  for await (const keys of scanKeys(redis, '*', undefined, 500)) {
    for (const key of keys) {
      const type = await redis.type(key);
      let value: unknown;
      if (type === 'string') value = await redis.get(key);
      else if (type === 'hash') value = await redis.hgetall(key);
      else if (type === 'list') value = await redis.lrange(key, 0, -1);
      else if (type === 'set') value = await redis.smembers(key);
      else if (type === 'zset') value = await redis.zrange(key, '0', '-1', 'WITHSCORES');
      else if (type === 'stream') value = await redis.xrange(key, '-', '+');
      else value = type;
      out.push(`${key} ${JSON.stringify(value)}`);
    }
  }
  return out.join('\n');
}
