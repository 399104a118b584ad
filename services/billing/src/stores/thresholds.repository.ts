import type { Micros } from '@svc/money';
import { toMicros } from '../db/account-lock';
import type { Tx } from '../db/transactions';
import type { PrismaClient } from '../generated/prisma/client';

/** A key queued for its limit check, at the version the check read. */
export interface QueuedKeyCheck {
  keyId: string;
  version: bigint;
}

/**
 * What the worker's threshold checks read and write (docs/decisions/0028, 0035): the
 * balance.low crossing state of billing_settings, and for key.limit.threshold the queue of
 * keys to check (key_limit_checks), each key's spend per UTC day (key_spend_days, both kept by
 * a trigger on settlements) and the notices sent (key_limit_notices). The events themselves
 * are the events store's, written by the service in the same transaction as the crossing.
 */
export class ThresholdsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Arms every account whose durable balance is back at or above its low-balance threshold (one statement). */
  async rearmLowBalance(): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE billing_settings s SET low_balance_armed = true, updated_at = clock_timestamp()
      FROM account_balances b
      WHERE b.account_id = s.account_id AND s.low_balance_threshold_micros IS NOT NULL AND NOT s.low_balance_armed
        AND b.balance_micros >= s.low_balance_threshold_micros`;
  }

  /** Accounts armed and below their low-balance threshold (candidates: fireLowBalance decides). */
  async crossedLowBalance(): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ account_id: string }[]>`
      SELECT s.account_id FROM billing_settings s LEFT JOIN account_balances b ON b.account_id = s.account_id
      WHERE s.low_balance_threshold_micros IS NOT NULL AND s.low_balance_armed AND COALESCE(b.balance_micros, 0) < s.low_balance_threshold_micros`;
    return rows.map((r) => r.account_id);
  }

  /**
   * Disarms one crossing, in `tx`: the UPDATE's condition makes it once however many workers
   * evaluate at the same time. Answers the threshold and the balance when this call disarmed it.
   */
  async fireLowBalance(tx: Tx, accountId: string): Promise<{ thresholdMicros: Micros; balanceMicros: Micros } | null> {
    const fired = await tx.$queryRaw<{ threshold: bigint; balance: bigint }[]>`
      UPDATE billing_settings s SET low_balance_armed = false, updated_at = clock_timestamp()
      FROM (SELECT COALESCE((SELECT balance_micros FROM account_balances WHERE account_id = ${accountId}), 0) AS balance) b
      WHERE s.account_id = ${accountId} AND s.low_balance_armed AND s.low_balance_threshold_micros IS NOT NULL
        AND b.balance < s.low_balance_threshold_micros
      RETURNING s.low_balance_threshold_micros AS threshold, b.balance AS balance`;
    const row = fired[0];
    return row === undefined ? null : { thresholdMicros: toMicros(row.threshold), balanceMicros: toMicros(row.balance) };
  }

  /** Keys that settled since their last check, after `afterKeyId`, in key order. */
  async queuedKeyChecks(afterKeyId: string, limit: number): Promise<QueuedKeyCheck[]> {
    const rows = await this.prisma.$queryRaw<{ key_id: string; version: bigint }[]>`
      SELECT key_id, version FROM key_limit_checks WHERE key_id > ${afterKeyId} ORDER BY key_id LIMIT ${limit}`;
    return rows.map((r) => ({ keyId: r.key_id, version: r.version }));
  }

  /** Removes each checked key from the queue only at the version it was read at (spend that landed meanwhile is checked again). */
  async deleteKeyChecks(checked: readonly QueuedKeyCheck[]): Promise<void> {
    await this.prisma.$executeRaw`
      DELETE FROM key_limit_checks k USING unnest(${checked.map((q) => q.keyId)}::text[], ${checked.map((q) => q.version.toString())}::bigint[]) AS d(key_id, version)
      WHERE k.key_id = d.key_id AND k.version = d.version`;
  }

  /** A key's spend over whole UTC days: from `startDay` (inclusive) to `endDay` (exclusive; null: no end). */
  async keySpend(keyId: string, accountId: string, startDay: string, endDay: string | null): Promise<Micros> {
    const rows = await this.prisma.$queryRaw<{ spent: bigint }[]>`
      SELECT COALESCE(sum(spent_micros), 0)::bigint AS spent FROM key_spend_days
      WHERE key_id = ${keyId} AND account_id = ${accountId} AND day >= ${startDay}::date
        AND (${endDay}::date IS NULL OR day < ${endDay}::date)`;
    return toMicros(rows[0]?.spent ?? 0n);
  }

  /** Claims the notice of one percentage of a key's period, in `tx`: false when it was sent already (the primary key). */
  async claimKeyNotice(tx: Tx, notice: { keyId: string; accountId: string; periodStart: Date; percent: number }): Promise<boolean> {
    const gate = await tx.$queryRaw<{ key_id: string }[]>`
      INSERT INTO key_limit_notices (key_id, period_start, percent, account_id) VALUES (${notice.keyId}, ${notice.periodStart}, ${notice.percent}, ${notice.accountId})
      ON CONFLICT DO NOTHING RETURNING key_id`;
    return gate.length > 0;
  }
}
