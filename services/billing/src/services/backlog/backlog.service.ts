import { redisKeys } from '@svc/contracts';
import { mgetAny, pipelineEach } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { knownStreamAccounts } from '../settlement/settlement-stream.adapter';

/** Per-second counters of records the drain wrote (every worker replica adds to the same ones). */
const DRAINED_PREFIX = 'svc:settle:drained:';
/** The drain rate is the average over this many whole seconds before the current one. */
export const DRAIN_RATE_WINDOW_S = 10;
const DRAINED_TTL_S = 5 * 60;

/** The settlement backlog: records the gateways settled that are not in PostgreSQL yet. */
export interface Backlog {
  pendingRecords: number;
  pendingAccounts: number;
  /** Age of the oldest record still in a stream (Redis clock), 0 when none. */
  oldestPendingAgeMs: number;
  /** Records written per second over the last DRAIN_RATE_WINDOW_S seconds. */
  drainRatePerS: number;
  /** pending / rate; null when records are pending and nothing drains (e.g. PostgreSQL down). */
  estimatedDrainMs: number | null;
}

export function backlogView(b: Backlog): Record<string, number | null> {
  return {
    pending_records: b.pendingRecords,
    pending_accounts: b.pendingAccounts,
    oldest_pending_age_ms: b.oldestPendingAgeMs,
    drain_rate_per_s: b.drainRatePerS,
    estimated_drain_ms: b.estimatedDrainMs,
  };
}

function streamMs(entryId: string): number | null {
  const ms = Number(entryId.split('-')[0]);
  return Number.isSafeInteger(ms) ? ms : null;
}

/**
 * Measures the backlog from Redis alone (it must work while PostgreSQL is down): the
 * accounts in the dirty set and the streams being drained, their XLEN and oldest entry id; the
 * drain rate from the drain's counters. No SCAN: the keyspace holds the result cache's
 * entries too, and this runs every BACKLOG_LOG_INTERVAL_MS and at every metrics scrape
 * (decision 0036). A stream whose dirty mark was lost counts once a sweep found it.
 */
export class BacklogService {
  constructor(private readonly redis: RedisClient) {}

  /** Called by the drain after each committed batch. */
  async recordDrained(records: number): Promise<void> {
    if (records <= 0) return;
    const key = `${DRAINED_PREFIX}${Math.floor(Date.now() / 1000)}`;
    await this.redis.multi().incrby(key, records).expire(key, DRAINED_TTL_S).exec();
  }

  async measure(): Promise<Backlog> {
    const accounts = await knownStreamAccounts(this.redis);

    const [seconds, micros] = await this.redis.time();
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    let pendingRecords = 0;
    let pendingAccounts = 0;
    let oldestMs: number | null = null;
    for (let start = 0; start < accounts.length; start += 500) {
      const chunk = accounts.slice(start, start + 500);
      const results = await pipelineEach(this.redis, chunk, (accountId) => redisKeys.settlementStream(accountId), (pipeline, accountId) => {
        const key = redisKeys.settlementStream(accountId);
        pipeline.xlen(key).xrange(key, '-', '+', 'COUNT', 1);
      });
      chunk.forEach((_accountId, i) => {
        const [lenError, len] = results[i]?.[0] ?? [null, 0];
        const [rangeError, range] = results[i]?.[1] ?? [null, []];
        if (lenError !== null || rangeError !== null) return; // e.g. a key of another type: not a backlog
        const count = Number(len);
        if (count <= 0) return;
        pendingRecords += count;
        pendingAccounts += 1;
        const first = (range as [string, string[]][])[0];
        const ms = first === undefined ? null : streamMs(first[0]);
        if (ms !== null && (oldestMs === null || ms < oldestMs)) oldestMs = ms;
      });
    }

    const nowS = Math.floor(Date.now() / 1000);
    const rateKeys = Array.from({ length: DRAIN_RATE_WINDOW_S }, (_, i) => `${DRAINED_PREFIX}${nowS - 1 - i}`);
    const drained = (await mgetAny(this.redis, rateKeys)).reduce((sum, v) => sum + (v === null ? 0 : Number(v) || 0), 0);
    const drainRatePerS = Math.round((drained / DRAIN_RATE_WINDOW_S) * 100) / 100;
    let estimatedDrainMs: number | null = 0;
    if (pendingRecords > 0) estimatedDrainMs = drainRatePerS > 0 ? Math.round((pendingRecords / drainRatePerS) * 1000) : null;
    return {
      pendingRecords,
      pendingAccounts,
      oldestPendingAgeMs: oldestMs === null ? 0 : Math.max(0, nowMs - oldestMs),
      drainRatePerS,
      estimatedDrainMs,
    };
  }
}
