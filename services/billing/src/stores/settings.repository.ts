import type { PrismaClient } from '../generated/prisma/client';

export interface SettingsRow {
  lowBalanceThresholdMicros: number | null;
}

/** billing_settings: one row per account that changed a setting. */
export class SettingsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async get(accountId: string): Promise<SettingsRow> {
    const rows = await this.prisma.$queryRaw<{ low_balance_threshold_micros: bigint | null }[]>`
      SELECT low_balance_threshold_micros FROM billing_settings WHERE account_id = ${accountId}`;
    const value = rows[0]?.low_balance_threshold_micros ?? null;
    return { lowBalanceThresholdMicros: value === null ? null : Number(value) };
  }

  /**
   * Sets the threshold and arms it: if the balance is already below the new threshold, the
   * next evaluation sends one balance.low (the owner asked to know).
   */
  async setLowBalanceThreshold(accountId: string, micros: number | null): Promise<SettingsRow> {
    const value = micros === null ? null : BigInt(micros);
    await this.prisma.$executeRaw`
      INSERT INTO billing_settings (account_id, low_balance_threshold_micros, low_balance_armed, updated_at)
      VALUES (${accountId}, ${value}, true, clock_timestamp())
      ON CONFLICT (account_id) DO UPDATE SET low_balance_threshold_micros = EXCLUDED.low_balance_threshold_micros,
        low_balance_armed = true, updated_at = clock_timestamp()`;
    return this.get(accountId);
  }
}
