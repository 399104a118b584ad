import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PrismaClient } from '../generated/prisma/client';

/** The one place the Prisma client is built: the pg driver adapter, no native engine. */
export function createPrismaClient(databaseUrl: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: 10 }) });
}

/** The billing database of a process: one node-postgres pool, and the Prisma client on it. */
export interface BillingDatabase {
  readonly prisma: PrismaClient;
  /** For the few statements written in SQL on the driver (the ledger drain's batch write). */
  readonly pool: Pool;
  close(): Promise<void>;
}

/**
 * One pool for Prisma and for the repositories that use the driver directly, so a process
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
