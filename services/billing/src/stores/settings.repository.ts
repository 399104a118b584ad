import type { Micros } from '@svc/money';
import { toMicros } from '../db/account-lock';
import type { Tx } from '../db/transactions';
import type { PrismaClient } from '../generated/prisma/client';

export interface SettingsRow {
  lowBalanceThresholdMicros: Micros | null;
}

/** What the owner sets (PATCH /v1/billing/settings), read under the settings row's lock before a change. */
export interface OwnerSettings {
  lowBalanceThresholdMicros: Micros | null;
  autoTopup: {
    enabled: boolean;
    thresholdMicros: Micros | null;
    amountMicros: Micros | null;
    monthlyCapMicros: Micros | null;
    /** A card is saved (automatic top-up may be turned on). */
    hasCard: boolean;
  };
}

/** An owner's change of automatic top-up, in micro-USD (absent fields stay). */
export interface AutoTopupChange {
  enabled?: boolean;
  thresholdMicros?: Micros;
  amountMicros?: Micros;
  monthlyCapMicros?: Micros;
}

const micros = (value: bigint | null): Micros | null => (value === null ? null : toMicros(value));

/** billing_settings as the owner reads and changes it: one row per account that changed a setting. */
export class SettingsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async get(accountId: string): Promise<SettingsRow> {
    const rows = await this.prisma.$queryRaw<{ low_balance_threshold_micros: bigint | null }[]>`
      SELECT low_balance_threshold_micros FROM billing_settings WHERE account_id = ${accountId}`;
    return { lowBalanceThresholdMicros: micros(rows[0]?.low_balance_threshold_micros ?? null) };
  }

  /** The account's row (made with the defaults when it has none), locked for a change in `tx`. */
  async lockForChange(tx: Tx, accountId: string): Promise<OwnerSettings> {
    await tx.$executeRaw`INSERT INTO billing_settings (account_id) VALUES (${accountId}) ON CONFLICT (account_id) DO NOTHING`;
    const rows = await tx.$queryRaw<{
      low_balance_threshold_micros: bigint | null; auto_topup_enabled: boolean; auto_topup_threshold_micros: bigint | null;
      auto_topup_amount_micros: bigint | null; auto_topup_monthly_cap_micros: bigint | null; payment_method_id: string | null;
    }[]>`
      SELECT low_balance_threshold_micros, auto_topup_enabled, auto_topup_threshold_micros, auto_topup_amount_micros, auto_topup_monthly_cap_micros, payment_method_id
      FROM billing_settings WHERE account_id = ${accountId} FOR UPDATE`;
    const row = rows[0];
    if (row === undefined) throw new Error('billing_settings row missing right after it was ensured');
    return {
      lowBalanceThresholdMicros: micros(row.low_balance_threshold_micros),
      autoTopup: {
        enabled: row.auto_topup_enabled, thresholdMicros: micros(row.auto_topup_threshold_micros), amountMicros: micros(row.auto_topup_amount_micros),
        monthlyCapMicros: micros(row.auto_topup_monthly_cap_micros), hasCard: row.payment_method_id !== null,
      },
    };
  }

  /**
   * Sets the threshold and arms it: if the balance is already below the new threshold, the
   * next evaluation sends one balance.low (the owner asked to know). The row is locked (lockForChange).
   */
  async setLowBalanceThreshold(tx: Tx, accountId: string, thresholdMicros: Micros | null): Promise<void> {
    await tx.$executeRaw`
      UPDATE billing_settings SET low_balance_threshold_micros = ${thresholdMicros === null ? null : BigInt(thresholdMicros)},
        low_balance_armed = true, updated_at = clock_timestamp()
      WHERE account_id = ${accountId}`;
  }

  /**
   * Saves the owner's change of automatic top-up (the row is locked: lockForChange). Saving is
   * the owner acting: the failure count and the notice are cleared and the crossing is armed
   * again (if the balance is already below the threshold, the next evaluation makes a top-up).
   */
  async updateAutoTopup(tx: Tx, accountId: string, change: AutoTopupChange): Promise<void> {
    const big = (value: Micros | undefined): bigint | null => (value === undefined ? null : BigInt(value));
    await tx.$executeRaw`
      UPDATE billing_settings SET
        auto_topup_enabled = COALESCE(${change.enabled ?? null}::boolean, auto_topup_enabled),
        auto_topup_threshold_micros = COALESCE(${big(change.thresholdMicros)}::bigint, auto_topup_threshold_micros),
        auto_topup_amount_micros = COALESCE(${big(change.amountMicros)}::bigint, auto_topup_amount_micros),
        auto_topup_monthly_cap_micros = COALESCE(${big(change.monthlyCapMicros)}::bigint, auto_topup_monthly_cap_micros),
        auto_topup_armed = true, auto_topup_consecutive_failures = 0, auto_topup_disabled_reason = NULL, updated_at = clock_timestamp()
      WHERE account_id = ${accountId}`;
  }
}
