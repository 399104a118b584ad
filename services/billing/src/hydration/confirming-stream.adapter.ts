import type { Redis } from 'ioredis';
import { SettlementStreamAdapter } from '../settlement/settlement-stream.adapter';
import type { StreamEntry } from '../settlement/settlement-stream.adapter';
import type { HydrationRedisAdapter } from './hydration-redis.adapter';

/**
 * The drain's stream adapter, plus confirmations for the gateways: the drain removes
 * entries only after their batch committed (or was dead-lettered), so the request ids of
 * removed entries are durable; they go to the current minute's confirmation set, and each
 * gateway stops retaining those records (search-gateway src/money/settlement-retainer.ts).
 */
export class ConfirmingStreamAdapter extends SettlementStreamAdapter {
  /** entry id -> request id, per account, for entries read and not yet removed. */
  private readonly seen = new Map<string, Map<string, string>>();

  constructor(redis: Redis, private readonly recovery: HydrationRedisAdapter) {
    super(redis);
  }

  override async read(accountId: string, count: number): Promise<StreamEntry[]> {
    const entries = await super.read(accountId, count);
    const ids = new Map<string, string>();
    for (const entry of entries) {
      const requestId = requestIdOf(entry.record);
      if (requestId !== null) ids.set(entry.id, requestId);
    }
    this.seen.set(accountId, ids);
    return entries;
  }

  override async remove(accountId: string, ids: readonly string[]): Promise<void> {
    await super.remove(accountId, ids);
    const known = this.seen.get(accountId);
    this.seen.delete(accountId);
    if (known === undefined) return;
    const requestIds = ids.map((id) => known.get(id)).filter((rid): rid is string => rid !== undefined);
    await this.recovery.confirm(requestIds);
  }
}

function requestIdOf(record: string | undefined): string | null {
  if (record === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(record);
    if (typeof parsed === 'object' && parsed !== null && 'requestId' in parsed && typeof parsed.requestId === 'string') return parsed.requestId;
  } catch {
    return null;
  }
  return null;
}
