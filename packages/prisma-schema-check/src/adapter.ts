import { randomUUID } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { Client, Pool } from 'pg';
import type { ClientConfig, PoolClient } from 'pg';

/** Postgres type OIDs: `"char"` (a one-byte internal type) and `text`. */
const OID_CHAR = 18;
const OID_TEXT = 25;

/**
 * A connection described by separate fields, never by a connection string: PrismaPg builds
 * the shadow database's pool as `{ ...config, database }`, and a `connectionString` in the
 * config wins over `database`, which silently makes the shadow database the main one.
 */
export interface ConnectionFields {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
}

export function connectionFields(url: string): ConnectionFields {
  const parsed = new URL(url);
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new Error(`not a PostgreSQL URL (protocol ${parsed.protocol})`);
  }
  const fields: ConnectionFields = {
    host: decodeURIComponent(parsed.hostname) || '127.0.0.1',
    port: parsed.port === '' ? 5432 : Number(parsed.port),
    user: decodeURIComponent(parsed.username) || 'postgres',
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
  };
  if (parsed.password !== '') fields.password = decodeURIComponent(parsed.password);
  return fields;
}

export function clientConfig(fields: ConnectionFields, database = fields.database): ClientConfig {
  const config: ClientConfig = { host: fields.host, port: fields.port, user: fields.user, database };
  if (fields.password !== undefined) config.password = fields.password;
  return config;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

interface FieldLike {
  dataTypeID: number;
}

function relabelCharFields(result: unknown): void {
  const results = Array.isArray(result) ? (result as unknown[]) : [result];
  for (const one of results) {
    const fields = (one as { fields?: unknown } | null | undefined)?.fields;
    if (!Array.isArray(fields)) continue;
    for (const field of fields as FieldLike[]) {
      if (field.dataTypeID === OID_CHAR) field.dataTypeID = OID_TEXT;
    }
  }
}

type AnyQuery = (...args: unknown[]) => unknown;

/**
 * The engine's catalog queries return columns of type `"char"` (e.g. `pg_class.relkind`),
 * which PrismaPg refuses as an unsupported native type. pg already parses them as strings,
 * so each result's field type is relabelled as `text` before the adapter looks at it. This
 * covers both the promise form (transactions) and the callback form (`Pool.query`).
 */
function decodeCharAsText(client: PoolClient): void {
  const original = client.query.bind(client) as AnyQuery;
  const patched: AnyQuery = (...args) => {
    const last = args.at(-1);
    if (typeof last === 'function') {
      const callback = last as (error: unknown, result: unknown) => void;
      args[args.length - 1] = (error: unknown, result: unknown) => {
        if (!error) relabelCharFields(result);
        callback(error, result);
      };
      return original(...args);
    }
    const returned = original(...args);
    if (returned instanceof Promise) {
      return returned.then((result: unknown) => {
        relabelCharFields(result);
        return result;
      });
    }
    return returned;
  };
  (client as unknown as { query: AnyQuery }).query = patched;
}

function charSafePool(config: ClientConfig): Pool {
  const pool = new Pool({ ...config, max: 4 });
  pool.on('connect', decodeCharAsText);
  return pool;
}

/** Delegates to PrismaPg's adapter and runs `afterDispose` once the adapter let go of its pool. */
class DisposingAdapter implements SqlDriverAdapter {
  readonly provider: SqlDriverAdapter['provider'];
  readonly adapterName: string;

  constructor(
    private readonly inner: SqlDriverAdapter,
    private readonly afterDispose: () => Promise<void>,
  ) {
    this.provider = inner.provider;
    this.adapterName = inner.adapterName;
  }

  queryRaw(...args: Parameters<SqlDriverAdapter['queryRaw']>): ReturnType<SqlDriverAdapter['queryRaw']> {
    return this.inner.queryRaw(...args);
  }

  executeRaw(...args: Parameters<SqlDriverAdapter['executeRaw']>): ReturnType<SqlDriverAdapter['executeRaw']> {
    return this.inner.executeRaw(...args);
  }

  executeScript(script: string): Promise<void> {
    return this.inner.executeScript(script);
  }

  startTransaction(...args: Parameters<SqlDriverAdapter['startTransaction']>): ReturnType<SqlDriverAdapter['startTransaction']> {
    return this.inner.startTransaction(...args);
  }

  getConnectionInfo(): ReturnType<NonNullable<SqlDriverAdapter['getConnectionInfo']>> {
    if (this.inner.getConnectionInfo === undefined) return { supportsRelationJoins: true };
    return this.inner.getConnectionInfo();
  }

  async dispose(): Promise<void> {
    await this.inner.dispose();
    await this.afterDispose();
  }
}

/**
 * A migration-aware adapter factory for the schema engine, built on PrismaPg, with the three
 * offline problems worked around: `"char"` columns decode as text, connections are made from
 * separate fields, and the shadow database is dropped `WITH (FORCE)` only after its pool has
 * ended. `close()` ends every pool it opened, in case the engine did not dispose one.
 */
export class EngineAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName = '@prisma/adapter-pg';
  private readonly pools = new Set<Pool>();

  constructor(private readonly fields: ConnectionFields) {}

  async connect(): Promise<SqlDriverAdapter> {
    return this.open(this.fields.database, async () => undefined);
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const database = `prisma_migrate_shadow_db_${randomUUID().replace(/-/g, '')}`;
    await this.admin(`CREATE DATABASE ${quoteIdent(database)}`);
    return this.open(database, () => this.admin(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`));
  }

  async close(): Promise<void> {
    const pools = [...this.pools];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.end()));
  }

  private async open(database: string, afterEnd: () => Promise<void>): Promise<SqlDriverAdapter> {
    const pool = charSafePool(clientConfig(this.fields, database));
    this.pools.add(pool);
    const inner = await new PrismaPg(pool).connect();
    return new DisposingAdapter(inner, async () => {
      if (this.pools.delete(pool)) await pool.end();
      await afterEnd();
    });
  }

  private async admin(sql: string): Promise<void> {
    const client = new Client(clientConfig(this.fields));
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
}
