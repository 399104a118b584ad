import { credentials, Metadata } from '@grpc/grpc-js';
import { KEY_LIMIT_THRESHOLD_PERCENTS, periodOf } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import { AccountAdminClient, limitResetFromProto } from '@svc/grpc';
import { microsToUsd } from '@svc/money';
import type { PrismaClient } from '../generated/prisma/client';
import { emitEvent } from '../events/event-emitter';

export interface KeyLimit {
  keyId: string;
  accountId: string;
  limitMicros: number;
  limitReset: LimitReset | null;
}

/** Where key limits come from: account-admin owns keys (GetKeyLimits). */
export interface KeyLimitSource {
  limitsOf(keyIds: readonly string[]): Promise<KeyLimit[]>;
  close(): void;
}

const CALL_TIMEOUT_MS = 5_000;

export class GrpcKeyLimitSource implements KeyLimitSource {
  private readonly client: InstanceType<typeof AccountAdminClient>;

  constructor(address: string) {
    this.client = new AccountAdminClient(address, credentials.createInsecure());
  }

  limitsOf(keyIds: readonly string[]): Promise<KeyLimit[]> {
    return new Promise((resolve, reject) => {
      this.client.getKeyLimits({ keyIds: [...keyIds] }, new Metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (error, response) => {
        if (error !== null) return reject(error);
        try {
          resolve(response.limits.map((l) => ({ keyId: l.keyId, accountId: l.accountId, limitMicros: l.limitMicros, limitReset: limitResetFromProto(l.limitReset) })));
        } catch (mapping) {
          reject(mapping as Error);
        }
      });
    });
  }

  close(): void {
    this.client.close();
  }
}

/** How far back each scan reaches before the last one's newest row: a drain transaction that committed late is still seen. */
const LAG_MS = 30_000;
/** The first scan of a process reaches this far back (what it may have missed while no worker ran is re-checked; the notices table dedupes). */
const FIRST_LOOK_BACK_MS = 10 * 60_000;
/** Keys asked of account-admin per call. */
const BATCH = 1_000;

/**
 * key.limit.threshold (docs/decisions/0028): after the ledger worker writes settlements, the
 * keys that settled since the last scan are checked against their limits. A key's spend in
 * its current period (its limit_reset's UTC day, week or month; all time without a reset) is
 * summed from the settlements, and each of 80 % and 100 % reached is sent once per period:
 * the key_limit_notices row and the event are written in one transaction, and the row's
 * primary key makes a second one (another replica, a re-scan) impossible.
 */
export class KeyLimitThresholds {
  private watermark: Date | null = null;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly limits: KeyLimitSource,
  ) {}

  async evaluate(nowMs = Date.now()): Promise<number> {
    const since = new Date((this.watermark?.getTime() ?? nowMs - FIRST_LOOK_BACK_MS + LAG_MS) - LAG_MS);
    const settled = await this.prisma.$queryRaw<{ key_id: string; newest: Date }[]>`
      SELECT key_id, max(created_at) AS newest FROM settlements WHERE created_at > ${since} GROUP BY key_id`;
    if (settled.length === 0) return 0;
    let written = 0;
    for (let at = 0; at < settled.length; at += BATCH) {
      const limits = await this.limits.limitsOf(settled.slice(at, at + BATCH).map((s) => s.key_id));
      for (const limit of limits) written += await this.check(limit, nowMs);
    }
    // Only once every key was checked: a failure re-scans the same window next time.
    const newest = settled.reduce((max, s) => (s.newest > max ? s.newest : max), settled[0]?.newest ?? since);
    if (this.watermark === null || newest > this.watermark) this.watermark = newest;
    return written;
  }

  private async check(limit: KeyLimit, nowMs: number): Promise<number> {
    const period = limit.limitReset === null ? { startMs: 0, endMs: null } : periodOf(limit.limitReset, nowMs);
    const end = period.endMs === null ? null : new Date(period.endMs);
    const rows = await this.prisma.$queryRaw<{ spent: bigint }[]>`
      SELECT COALESCE(sum(charged_micros), 0)::bigint AS spent FROM settlements
      WHERE account_id = ${limit.accountId} AND key_id = ${limit.keyId} AND settled_at >= ${new Date(period.startMs)}
        AND (${end}::timestamptz IS NULL OR settled_at < ${end}::timestamptz)`;
    const spent = Number(rows[0]?.spent ?? 0);
    let written = 0;
    for (const percent of KEY_LIMIT_THRESHOLD_PERCENTS) {
      if (spent * 100 < limit.limitMicros * percent) continue;
      written += await this.prisma.$transaction(async (tx) => {
        const gate = await tx.$queryRaw<{ key_id: string }[]>`
          INSERT INTO key_limit_notices (key_id, period_start, percent, account_id) VALUES (${limit.keyId}, ${new Date(period.startMs)}, ${percent}, ${limit.accountId})
          ON CONFLICT DO NOTHING RETURNING key_id`;
        if (gate.length === 0) return 0;
        await emitEvent(tx, {
          accountId: limit.accountId,
          type: 'key.limit.threshold',
          data: {
            key_id: limit.keyId, percent, limit_usd: microsToUsd(limit.limitMicros), usage_usd: microsToUsd(spent), limit_reset: limit.limitReset,
            period_start: limit.limitReset === null ? null : new Date(period.startMs).toISOString(), period_end: end?.toISOString() ?? null,
          },
        });
        return 1;
      });
    }
    return written;
  }
}
