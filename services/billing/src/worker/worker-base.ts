import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import type { Logger } from 'pino';
import { createBillingDatabase } from '../db/prisma.repository';
import type { BillingDatabase } from '../db/prisma.repository';

/** What a worker opened, closed in the reverse order; a part that fails to close is logged and the rest still close. */
export class Opened {
  private readonly parts: { name: string; close(): unknown }[] = [];

  constructor(private readonly logger: Logger) {}

  push(name: string, close: () => unknown): void {
    this.parts.push({ name, close });
  }

  readonly close = async (): Promise<void> => {
    for (const { name, close } of this.parts.splice(0).reverse()) {
      await Promise.resolve().then(close).catch((error: unknown) => this.logger.warn({ err: error }, `closing the ${name} failed`));
    }
  };
}

/**
 * The stores every billing worker starts with: billing's database and the data connection to
 * Redis, each registered in `opened`. Commands on the data connection fail fast, so a job fails
 * rather than hangs (the queues' connections retry forever, as BullMQ requires).
 */
export function openWorkerStores(
  config: { readonly DATABASE_URL: string; readonly REDIS_URL: string; readonly REDIS_CLUSTER: boolean },
  logger: Logger,
  opened: Opened,
): { db: BillingDatabase; data: RedisClient; target: { url: string; cluster: boolean } } {
  const db = createBillingDatabase(config.DATABASE_URL, (error) => logger.warn({ err: error.message }, 'idle postgres connection failed; the pool replaces it'));
  opened.push('database', () => db.close());
  const target = { url: config.REDIS_URL, cluster: config.REDIS_CLUSTER };
  const data = createRedisClient(target, { maxRetriesPerRequest: 2, connectTimeout: 2_000 });
  data.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  opened.push('redis connection', () => closeRedisClient(data));
  return { db, data, target };
}
