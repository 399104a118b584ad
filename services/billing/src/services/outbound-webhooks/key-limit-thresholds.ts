import { credentials, Metadata } from '@grpc/grpc-js';
import { KEY_LIMIT_THRESHOLD_PERCENTS, periodOf } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import { AccountAdminClient, limitResetFromProto } from '@svc/grpc';
import { microsToUsd } from '@svc/money';
import type { PrismaClient } from '../../generated/prisma/client';
import { emitEvent } from '../../stores/event-emitter';
import { formatDay } from '../usage/usage-query';

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

/** Keys read from the queue, and asked of account-admin, per call. */
const BATCH = 1_000;

/**
 * key.limit.threshold (docs/decisions/0028, 0035): the keys that settled since their last
 * check (key_limit_checks, queued by a trigger on settlements in the drain's transaction) are
 * checked against their limits. A key's spend in its current period (its limit_reset's UTC
 * day, week or month; all time without a reset) is the sum of its days in key_spend_days, and
 * each of 80 % and 100 % reached is sent once per period: the key_limit_notices row and the
 * event are written in one transaction, and the row's primary key makes a second one (another
 * replica, a re-check) impossible. A key leaves the queue only at the version it was read at:
 * spend that landed while it was checked is checked again at the next evaluation.
 */
export class KeyLimitThresholds {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly limits: KeyLimitSource,
  ) {}

  async evaluate(nowMs = Date.now()): Promise<number> {
    let written = 0;
    let after = '';
    for (;;) {
      const queued = await this.prisma.$queryRaw<{ key_id: string; version: bigint }[]>`
        SELECT key_id, version FROM key_limit_checks WHERE key_id > ${after} ORDER BY key_id LIMIT ${BATCH}`;
      if (queued.length === 0) return written;
      const limits = await this.limits.limitsOf(queued.map((q) => q.key_id));
      for (const limit of limits) written += await this.check(limit, nowMs);
      // Only once every key of the batch was checked: a failure leaves them for the next evaluation.
      await this.prisma.$executeRaw`
        DELETE FROM key_limit_checks k USING unnest(${queued.map((q) => q.key_id)}::text[], ${queued.map((q) => q.version.toString())}::bigint[]) AS d(key_id, version)
        WHERE k.key_id = d.key_id AND k.version = d.version`;
      if (queued.length < BATCH) return written;
      after = queued[queued.length - 1]?.key_id ?? after;
    }
  }

  private async check(limit: KeyLimit, nowMs: number): Promise<number> {
    const period = limit.limitReset === null ? { startMs: 0, endMs: null } : periodOf(limit.limitReset, nowMs);
    const end = period.endMs === null ? null : new Date(period.endMs);
    // Periods start and end on UTC midnights, so they are whole days of key_spend_days.
    const endDay = period.endMs === null ? null : formatDay(period.endMs);
    const rows = await this.prisma.$queryRaw<{ spent: bigint }[]>`
      SELECT COALESCE(sum(spent_micros), 0)::bigint AS spent FROM key_spend_days
      WHERE key_id = ${limit.keyId} AND account_id = ${limit.accountId} AND day >= ${formatDay(period.startMs)}::date
        AND (${endDay}::date IS NULL OR day < ${endDay}::date)`;
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
