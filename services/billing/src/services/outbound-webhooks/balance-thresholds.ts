import { microsToUsd } from '@svc/money';
import type { PrismaClient } from '../../generated/prisma/client';
import { emitEvent } from '../../stores/event-emitter';

/**
 * balance.low, once per downward crossing (docs/decisions/0028). Evaluated by the ledger
 * worker on the durable balance (PostgreSQL), never on the search path. Each account with a
 * threshold is armed while its balance is at or above it; the first evaluation that finds it
 * below disarms it and writes the event in the same transaction (the UPDATE's condition makes
 * that once, however many workers evaluate at the same time); a balance back at or above the
 * threshold arms it again.
 */
export class BalanceThresholds {
  constructor(private readonly prisma: PrismaClient) {}

  /** Returns how many balance.low events it wrote. */
  async evaluate(): Promise<number> {
    // Rearm every account back at or above its threshold (one statement).
    await this.prisma.$executeRaw`
      UPDATE billing_settings s SET low_balance_armed = true, updated_at = clock_timestamp()
      FROM account_balances b
      WHERE b.account_id = s.account_id AND s.low_balance_threshold_micros IS NOT NULL AND NOT s.low_balance_armed
        AND b.balance_micros >= s.low_balance_threshold_micros`;
    const crossed = await this.prisma.$queryRaw<{ account_id: string }[]>`
      SELECT s.account_id FROM billing_settings s LEFT JOIN account_balances b ON b.account_id = s.account_id
      WHERE s.low_balance_threshold_micros IS NOT NULL AND s.low_balance_armed AND COALESCE(b.balance_micros, 0) < s.low_balance_threshold_micros`;
    let written = 0;
    for (const { account_id: accountId } of crossed) {
      written += await this.prisma.$transaction(async (tx) => {
        const fired = await tx.$queryRaw<{ threshold: bigint; balance: bigint }[]>`
          UPDATE billing_settings s SET low_balance_armed = false, updated_at = clock_timestamp()
          FROM (SELECT COALESCE((SELECT balance_micros FROM account_balances WHERE account_id = ${accountId}), 0) AS balance) b
          WHERE s.account_id = ${accountId} AND s.low_balance_armed AND s.low_balance_threshold_micros IS NOT NULL
            AND b.balance < s.low_balance_threshold_micros
          RETURNING s.low_balance_threshold_micros AS threshold, b.balance AS balance`;
        const row = fired[0];
        if (row === undefined) return 0;
        await emitEvent(tx, {
          accountId,
          type: 'balance.low',
          data: { balance_usd: microsToUsd(Number(row.balance)), threshold_usd: microsToUsd(Number(row.threshold)) },
        });
        return 1;
      });
    }
    return written;
  }
}
