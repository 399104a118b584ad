import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import type { PoolClient } from 'pg';
import { PrismaClient } from '../generated/prisma/client';

/** The billing database of a process: one node-postgres pool, and the Prisma client on it. */
export interface BillingDatabase {
  readonly prisma: PrismaClient;
  /** For the few statements written in SQL on the driver (the ledger drain's batch write). */
  readonly pool: Pool;
  close(): Promise<void>;
}

/**
 * The one place the Prisma client is built (the pg driver adapter, no native engine), on
 * one pool for Prisma and for the repositories that use the driver directly, so a process
 * holds `max` connections in all. `onIdleError`: a pooled connection that broke while idle
 * (e.g. PostgreSQL restarted); the pool replaces it, the process only logs it.
 */
export function createBillingDatabase(databaseUrl: string, onIdleError: (error: Error) => void, max = 10): BillingDatabase {
  const pool = new Pool({ connectionString: databaseUrl, max });
  pool.on('error', onIdleError);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/**
 * Runs `work` in one transaction on a connection of `pool`: BEGIN, then COMMIT when `work`
 * resolves, ROLLBACK when it throws (the error is rethrown).
 *
 * While the connection is checked out nobody else listens to it, and node-postgres emits
 * 'error' on a connection that breaks between two statements (PostgreSQL restarted or the
 * session terminated); unheard, that event ends the process. Here it is heard: the error
 * is kept, the statement that follows fails, and the connection goes back to the pool as
 * broken, so the pool discards it. So does a connection whose ROLLBACK failed.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: unknown) => {
      broken ??= rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

export type { PrismaClient };

/** Readiness of the billing database. */
export class DatabaseProbeRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async ping(): Promise<boolean> {
    try {
      await this.prisma.$queryRaw`SELECT 1`;
      return true;
    } catch {
      return false;
    }
  }
}
