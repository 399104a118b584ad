import type { RedisClient } from '@svc/redis-client';
import { SettlementStreamAdapter } from '../settlement/settlement-stream.adapter';
import type { RemovedEntry } from '../settlement/settlement-stream.adapter';
import type { HydrationRedisAdapter } from './hydration-redis.adapter';

/**
 * The drain's stream adapter, plus confirmations for the gateways: the drain removes
 * entries only after their batch committed (or was dead-lettered), so the request ids of
 * removed entries are durable; they go to the current minute's confirmation set, and each
 * gateway stops retaining those records (search-gateway src/money/settlement-retainer.ts).
 * The drain already parsed every entry, so it hands over the request ids it found.
 */
export class ConfirmingStreamAdapter extends SettlementStreamAdapter {
  constructor(redis: RedisClient, private readonly recovery: HydrationRedisAdapter) {
    super(redis);
  }

  override async remove(accountId: string, removed: readonly RemovedEntry[]): Promise<void> {
    await super.remove(accountId, removed);
    const requestIds: string[] = [];
    for (const entry of removed) if (entry.requestId !== null) requestIds.push(entry.requestId);
    await this.recovery.confirm(requestIds);
  }
}
