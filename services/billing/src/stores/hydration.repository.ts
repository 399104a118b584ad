import type { Micros } from '@svc/money';
import type { PrismaClient } from '../generated/prisma/client';
import { toMicros, underBalanceLock } from '../db/account-lock';
import { DAY_MS } from '../common/usage-query';

/** A key's settled charges since each period start (UTC ms) and in all time. */
export interface KeyUsage {
  keyId: string;
  sinceMicros: Map<number, Micros>;
  allTimeMicros: Micros;
}

/** What hydration sees while the account's lock is held. */
export interface HydrationView {
  durableMicros: Micros;
  /** Entries not yet applied to the spendable balance (their amounts are in durableMicros). */
  unappliedEntryIds: string[];
  /** Any entry was ever applied to Redis, or any search settled: the account has a spendable history. */
  hasHistory: boolean;
  settledAmong(requestIds: readonly string[]): Promise<Set<string>>;
  usageSince(periodStartsMs: readonly number[]): Promise<KeyUsage[]>;
  /** Marks the entries applied (only those still unmarked), inside the locked transaction. */
  markApplied(entryIds: readonly string[]): Promise<void>;
  /** What the account's research runs not settled yet hold, per key (their keys' holds: docs/decisions/0062). */
  openResearchHolds(): Promise<{ keyId: string; heldMicros: Micros }[]>;
}

/**
 * Hydration's reads of the durable side, under the account's lock: the balance row
 * (SELECT ... FOR UPDATE), the same lock the ledger drain, every ledger append and
 * reconciliation take (docs/finance.md), so no settlement batch and no grant of the account
 * commits while the balance is being rebuilt.
 */
export class HydrationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs `inside` under the lock; null when the account has no balance row (no history at all). */
  async underAccountLock<T>(accountId: string, inside: (view: HydrationView) => Promise<T>): Promise<T | null> {
    return underBalanceLock(this.prisma, accountId, async ({ tx, durableMicros, settledAmong }) => {
      const entries = await tx.$queryRaw<{ id: string; applied: boolean }[]>`
        SELECT id, applied_to_spendable_at IS NOT NULL AS applied FROM ledger_entries WHERE account_id = ${accountId}`;
      const settledAny = await tx.$queryRaw<{ one: number }[]>`
        SELECT 1 AS one FROM settlements WHERE account_id = ${accountId} LIMIT 1`;
      const view: HydrationView = {
        durableMicros,
        unappliedEntryIds: entries.filter((e) => !e.applied).map((e) => e.id),
        hasHistory: settledAny.length > 0 || entries.some((e) => e.applied),
        settledAmong,
        async usageSince(periodStartsMs) {
          // From each key's spend per UTC day (decision 35), kept with the settlements in their
          // transaction: one row per key and day instead of one per search. Periods start at UTC
          // midnights, so a day counts wholly in a period or not at all.
          if (periodStartsMs.some((start) => start % DAY_MS !== 0)) throw new Error('key usage is kept per UTC day: a period must start at a UTC midnight');
          const rows = await tx.$queryRaw<{ key_id: string; day: Date; spent_micros: bigint }[]>`
            SELECT key_id, day, spent_micros FROM key_spend_days WHERE account_id = ${accountId} AND spent_micros > 0`;
          const byKey = new Map<string, KeyUsage>();
          for (const r of rows) {
            let usage = byKey.get(r.key_id);
            if (usage === undefined) {
              usage = { keyId: r.key_id, sinceMicros: new Map(periodStartsMs.map((s) => [s, 0])), allTimeMicros: 0 };
              byKey.set(r.key_id, usage);
            }
            const spent = toMicros(r.spent_micros);
            usage.allTimeMicros += spent;
            for (const start of periodStartsMs) {
              if (r.day.getTime() >= start) usage.sinceMicros.set(start, (usage.sinceMicros.get(start) ?? 0) + spent);
            }
          }
          return [...byKey.values()];
        },
        async openResearchHolds() {
          const rows = await tx.$queryRaw<{ key_id: string; held: bigint }[]>`
            SELECT key_id, sum(held_micros)::bigint AS held FROM research_runs WHERE account_id = ${accountId} AND settled_at IS NULL GROUP BY key_id`;
          return rows.map((r) => ({ keyId: r.key_id, heldMicros: toMicros(r.held) }));
        },
        async markApplied(entryIds) {
          if (entryIds.length === 0) return;
          await tx.$executeRaw`
            UPDATE ledger_entries SET applied_to_spendable_at = clock_timestamp()
            WHERE account_id = ${accountId} AND id = ANY(${[...entryIds]}::text[]) AND applied_to_spendable_at IS NULL`;
        },
      };
      return inside(view);
    });
  }
}
