import type { Micros } from '@svc/money';
import { toMicros } from '../db/account-lock';
import { paidPurchaseFromRow } from '../db/paid-purchase-row';
import type { PaidPurchase, PaidPurchaseRow } from '../db/paid-purchase-row';
import type { Tx } from '../db/transactions';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';

/** A pending top-up to charge (or to follow up: its PaymentIntent is known). */
export interface DueTopUp {
  id: string;
  accountId: string;
  amountMicros: Micros;
  paymentIntentId: string | null;
  customerId: string | null;
  paymentMethodId: string | null;
  attempts: number;
  createdAt: Date;
}

/** An armed account's top-up settings and durable balance, read under its settings row lock. */
export interface LockedCrossing {
  amountMicros: Micros;
  capMicros: Micros;
  thresholdMicros: Micros;
  balanceMicros: Micros;
}

/** A top-up row, locked. */
export interface LockedTopUp {
  accountId: string;
  status: string;
  amountMicros: Micros;
  paymentIntentId: string | null;
}

/** What GET /v1/billing/settings shows of automatic top-up. */
export interface AutoTopupState {
  enabled: boolean;
  thresholdMicros: Micros | null;
  amountMicros: Micros | null;
  monthlyCapMicros: Micros | null;
  consecutiveFailures: number;
  disabledReason: string | null;
  customerId: string | null;
  paymentMethod: { id: string; brand: string | null; last4: string | null; savedAt: Date } | null;
  /** Pending and succeeded top-ups of the current UTC month (what the cap counts). */
  monthMicros: Micros;
  last: { id: string; status: string; amountMicros: Micros; failureCode: string | null; createdAt: Date } | null;
}

/** The UTC calendar month (YYYY-MM) of the database's clock, as the cap counts it. */
const MONTH_SQL_FRAGMENT = Prisma.raw("to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM')");

const n = (value: bigint | null): Micros | null => (value === null ? null : toMicros(value));

/**
 * auto_topups and the worker's columns of billing_settings (docs/decisions/0028). Every
 * decision that touches money is taken by AutoTopupService in one transaction under the
 * account's billing_settings row lock (lockCrossing) or the top-up's row lock (lockTopUp):
 * whether a crossing makes a top-up, what the month's top-ups add up to against the cap,
 * whether one is already in flight (also a partial unique index), and the failure count.
 */
export class AutoTopupRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Arms every enabled account whose durable balance is back at or above its threshold. */
  async rearm(): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE billing_settings s SET auto_topup_armed = true, updated_at = clock_timestamp()
      FROM account_balances b
      WHERE b.account_id = s.account_id AND s.auto_topup_enabled AND NOT s.auto_topup_armed
        AND b.balance_micros >= s.auto_topup_threshold_micros`;
  }

  /** Accounts whose balance crossed below the threshold while armed (candidates; the service decides under the lock). */
  async crossed(limit: number): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ account_id: string }[]>`
      SELECT s.account_id FROM billing_settings s LEFT JOIN account_balances b ON b.account_id = s.account_id
      WHERE s.auto_topup_enabled AND s.auto_topup_armed AND s.payment_method_id IS NOT NULL
        AND COALESCE(b.balance_micros, 0) < s.auto_topup_threshold_micros
      ORDER BY s.account_id LIMIT ${limit}`;
    return rows.map((r) => r.account_id);
  }

  /** Locks the account's settings row if automatic top-up is still on, armed, complete and has a card; null otherwise. */
  async lockCrossing(tx: Tx, accountId: string): Promise<LockedCrossing | null> {
    const locked = await tx.$queryRaw<{ amount: bigint; cap: bigint; threshold: bigint; balance: bigint }[]>`
      SELECT s.auto_topup_amount_micros AS amount, s.auto_topup_monthly_cap_micros AS cap, s.auto_topup_threshold_micros AS threshold,
        COALESCE((SELECT balance_micros FROM account_balances WHERE account_id = s.account_id), 0) AS balance
      FROM billing_settings s
      WHERE s.account_id = ${accountId} AND s.auto_topup_enabled AND s.auto_topup_armed AND s.payment_method_id IS NOT NULL
        AND s.auto_topup_amount_micros IS NOT NULL AND s.auto_topup_monthly_cap_micros IS NOT NULL AND s.auto_topup_threshold_micros IS NOT NULL
      FOR UPDATE OF s`;
    const row = locked[0];
    return row === undefined ? null : {
      amountMicros: toMicros(row.amount), capMicros: toMicros(row.cap), thresholdMicros: toMicros(row.threshold), balanceMicros: toMicros(row.balance),
    };
  }

  async hasPending(tx: Tx, accountId: string): Promise<boolean> {
    const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM auto_topups WHERE account_id = ${accountId} AND status = 'pending'`;
    return rows.length > 0;
  }

  /** The crossing is consumed: the next one needs the balance back at or above the threshold first. */
  async disarm(tx: Tx, accountId: string): Promise<void> {
    await tx.$executeRaw`UPDATE billing_settings SET auto_topup_armed = false, updated_at = clock_timestamp() WHERE account_id = ${accountId}`;
  }

  /** The current UTC month (the database's clock) and what its pending and succeeded top-ups add up to. */
  async monthUsed(tx: Tx, accountId: string): Promise<{ month: string; usedMicros: Micros }> {
    const [month] = await tx.$queryRaw<{ month: string; used: bigint }[]>`
      SELECT m.month, COALESCE((SELECT sum(amount_micros) FROM auto_topups
        WHERE account_id = ${accountId} AND month = m.month AND status IN ('pending', 'succeeded')), 0)::bigint AS used
      FROM (SELECT ${MONTH_SQL_FRAGMENT} AS month) m`;
    if (month === undefined) throw new Error('month query returned no row');
    return { month: month.month, usedMicros: toMicros(month.used) };
  }

  async insertPending(tx: Tx, row: { id: string; accountId: string; amountMicros: Micros; month: string }): Promise<void> {
    await tx.$executeRaw`
      INSERT INTO auto_topups (id, account_id, status, amount_micros, month)
      VALUES (${row.id}, ${row.accountId}, 'pending', ${BigInt(row.amountMicros)}, ${row.month})`;
  }

  /** A top-up the cap refused: recorded, never charged. */
  async insertSkipped(tx: Tx, row: { id: string; accountId: string; amountMicros: Micros; month: string; failureCode: string }): Promise<void> {
    await tx.$executeRaw`
      INSERT INTO auto_topups (id, account_id, status, amount_micros, month, failure_code, settled_at)
      VALUES (${row.id}, ${row.accountId}, 'skipped', ${BigInt(row.amountMicros)}, ${row.month}, ${row.failureCode}, clock_timestamp())`;
  }

  /**
   * Pending top-ups to charge now: never tried, or last tried more than `retryAfterMs` ago
   * (Stripe was unreachable, the worker stopped mid-call, or the PaymentIntent is still
   * processing and its webhook may have been lost).
   */
  async due(retryAfterMs: number, limit: number): Promise<DueTopUp[]> {
    const rows = await this.prisma.$queryRaw<{
      id: string; account_id: string; amount_micros: bigint; payment_intent_id: string | null; stripe_customer_id: string | null;
      payment_method_id: string | null; attempts: number; created_at: Date;
    }[]>`
      SELECT t.id, t.account_id, t.amount_micros, t.payment_intent_id, s.stripe_customer_id, s.payment_method_id, t.attempts, t.created_at
      FROM auto_topups t LEFT JOIN billing_settings s ON s.account_id = t.account_id
      WHERE t.status = 'pending' AND (t.last_attempt_at IS NULL OR t.last_attempt_at < clock_timestamp() - ${retryAfterMs} * interval '1 millisecond')
      ORDER BY t.created_at LIMIT ${limit}`;
    return rows.map((r) => ({
      id: r.id, accountId: r.account_id, amountMicros: toMicros(r.amount_micros), paymentIntentId: r.payment_intent_id,
      customerId: r.stripe_customer_id, paymentMethodId: r.payment_method_id, attempts: r.attempts, createdAt: r.created_at,
    }));
  }

  /** Claims the next attempt (compare-and-set on `attempts`): false when another worker took it. */
  async claimAttempt(id: string, attempts: number): Promise<boolean> {
    const changed = await this.prisma.$executeRaw`
      UPDATE auto_topups SET attempts = attempts + 1, last_attempt_at = clock_timestamp(), updated_at = clock_timestamp()
      WHERE id = ${id} AND status = 'pending' AND attempts = ${attempts}`;
    return changed > 0;
  }

  /** Records the PaymentIntent of a top-up still pending (processing). */
  async notePaymentIntent(id: string, paymentIntentId: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE auto_topups SET payment_intent_id = ${paymentIntentId}, updated_at = clock_timestamp()
      WHERE id = ${id} AND payment_intent_id IS NULL`;
  }

  async accountOf(id: string): Promise<string | null> {
    const rows = await this.prisma.$queryRaw<{ account_id: string }[]>`SELECT account_id FROM auto_topups WHERE id = ${id}`;
    return rows[0]?.account_id ?? null;
  }

  /** Locks a top-up's row (the synchronous answer and Stripe's webhook take turns on it); null when there is none. */
  async lockTopUp(tx: Tx, id: string): Promise<LockedTopUp | null> {
    const rows = await tx.$queryRaw<{ account_id: string; status: string; amount_micros: bigint; payment_intent_id: string | null }[]>`
      SELECT account_id, status, amount_micros, payment_intent_id FROM auto_topups WHERE id = ${id} FOR UPDATE`;
    const row = rows[0];
    return row === undefined ? null : { accountId: row.account_id, status: row.status, amountMicros: toMicros(row.amount_micros), paymentIntentId: row.payment_intent_id };
  }

  /**
   * The top-up succeeded (its credit written in the same transaction). A top-up given up
   * before (failed, e.g. Stripe unreachable for 23 hours) whose payment Stripe reports now
   * counts from now: its month becomes the current one, so the cap of the month it landed in
   * counts it (docs/finance.md, "Automatic top-up").
   */
  async markSucceeded(tx: Tx, id: string, paid: { paymentIntentId: string; ledgerEntryId: string }): Promise<void> {
    // A second PaymentIntent for one top-up (only if Stripe forgot an idempotency key) is credited too: money taken is money credited.
    await tx.$executeRaw`
      UPDATE auto_topups SET
        month = CASE WHEN status IN ('pending', 'succeeded') THEN month ELSE ${MONTH_SQL_FRAGMENT} END,
        settled_at = CASE WHEN status IN ('pending', 'succeeded') THEN COALESCE(settled_at, clock_timestamp()) ELSE clock_timestamp() END,
        status = 'succeeded', payment_intent_id = COALESCE(payment_intent_id, ${paid.paymentIntentId}), ledger_entry_id = COALESCE(ledger_entry_id, ${paid.ledgerEntryId}),
        failure_code = NULL, updated_at = clock_timestamp()
      WHERE id = ${id}`;
  }

  /** A success: the failure count cleared, and the next crossing armed at once when the balance is back at or above the threshold. */
  async resetFailuresAndArm(tx: Tx, accountId: string, balanceAfterMicros: Micros): Promise<void> {
    await tx.$executeRaw`
      UPDATE billing_settings SET auto_topup_consecutive_failures = 0,
        auto_topup_armed = auto_topup_armed OR ${BigInt(balanceAfterMicros)} >= auto_topup_threshold_micros, updated_at = clock_timestamp()
      WHERE account_id = ${accountId}`;
  }

  async markFailed(tx: Tx, id: string, failureCode: string, paymentIntentId: string | null): Promise<void> {
    await tx.$executeRaw`
      UPDATE auto_topups SET status = 'failed', failure_code = ${failureCode}, payment_intent_id = COALESCE(payment_intent_id, ${paymentIntentId}),
        settled_at = clock_timestamp(), updated_at = clock_timestamp()
      WHERE id = ${id}`;
  }

  /**
   * One more consecutive failure; at `maxFailures` automatic top-up turns itself off
   * (`disabled_reason: payment_failed`). Answers the count and whether it is still on.
   */
  async countFailure(tx: Tx, accountId: string, maxFailures: number): Promise<{ failures: number; enabled: boolean } | null> {
    const [settings] = await tx.$queryRaw<{ failures: number; enabled: boolean }[]>`
      UPDATE billing_settings SET auto_topup_consecutive_failures = auto_topup_consecutive_failures + 1,
        auto_topup_enabled = auto_topup_enabled AND auto_topup_consecutive_failures + 1 < ${maxFailures},
        auto_topup_disabled_reason = CASE WHEN auto_topup_consecutive_failures + 1 >= ${maxFailures} THEN 'payment_failed' ELSE auto_topup_disabled_reason END,
        updated_at = clock_timestamp()
      WHERE account_id = ${accountId}
      RETURNING auto_topup_consecutive_failures AS failures, auto_topup_enabled AS enabled`;
    return settings ?? null;
  }

  /** A succeeded top-up's charge, locked for a refund or a dispute; null when no succeeded top-up has this PaymentIntent. */
  async lockSucceededForDebit(tx: Tx, paymentIntentId: string): Promise<PaidPurchase | null> {
    const rows = await tx.$queryRaw<PaidPurchaseRow[]>`
      SELECT payment_intent_id AS gate_id, account_id, amount_micros AS credit_micros, refunded_micros, disputed_micros FROM auto_topups
      WHERE payment_intent_id = ${paymentIntentId} AND status = 'succeeded' FOR UPDATE`;
    const row = rows[0];
    return row === undefined ? null : paidPurchaseFromRow(row);
  }

  /** What a refund or a dispute took back of a top-up's charge, in its debit's transaction. */
  async recordTakenBack(tx: Tx, paymentIntentId: string, kind: 'stripe_refund' | 'dispute', amountMicros: Micros): Promise<void> {
    const refunded = kind === 'stripe_refund' ? BigInt(amountMicros) : 0n;
    const disputed = kind === 'dispute' ? BigInt(amountMicros) : 0n;
    await tx.$executeRaw`UPDATE auto_topups SET refunded_micros = refunded_micros + ${refunded}, disputed_micros = disputed_micros + ${disputed},
      updated_at = clock_timestamp() WHERE payment_intent_id = ${paymentIntentId}`;
  }

  /** Pending top-ups the processor could not be reached for, older than `ageMs`, end failed (`processor_unreachable`). */
  async stale(ageMs: number): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM auto_topups WHERE status = 'pending' AND payment_intent_id IS NULL
        AND created_at < clock_timestamp() - ${ageMs} * interval '1 millisecond'`;
    return rows.map((r) => r.id);
  }

  // ---- settings ----

  async state(accountId: string): Promise<AutoTopupState> {
    const rows = await this.prisma.$queryRaw<{
      auto_topup_enabled: boolean; auto_topup_threshold_micros: bigint | null; auto_topup_amount_micros: bigint | null; auto_topup_monthly_cap_micros: bigint | null;
      auto_topup_consecutive_failures: number; auto_topup_disabled_reason: string | null; stripe_customer_id: string | null; payment_method_id: string | null;
      payment_method_brand: string | null; payment_method_last4: string | null; payment_method_saved_at: Date | null;
    }[]>`
      SELECT auto_topup_enabled, auto_topup_threshold_micros, auto_topup_amount_micros, auto_topup_monthly_cap_micros, auto_topup_consecutive_failures,
        auto_topup_disabled_reason, stripe_customer_id, payment_method_id, payment_method_brand, payment_method_last4, payment_method_saved_at
      FROM billing_settings WHERE account_id = ${accountId}`;
    const [month] = await this.prisma.$queryRaw<{ used: bigint }[]>`
      SELECT COALESCE(sum(amount_micros), 0)::bigint AS used FROM auto_topups
      WHERE account_id = ${accountId} AND status IN ('pending', 'succeeded') AND month = ${MONTH_SQL_FRAGMENT}`;
    const last = await this.prisma.$queryRaw<{ id: string; status: string; amount_micros: bigint; failure_code: string | null; created_at: Date }[]>`
      SELECT id, status, amount_micros, failure_code, created_at FROM auto_topups WHERE account_id = ${accountId}
      ORDER BY created_at DESC, id DESC LIMIT 1`;
    const row = rows[0];
    const lastRow = last[0];
    return {
      enabled: row?.auto_topup_enabled ?? false,
      thresholdMicros: n(row?.auto_topup_threshold_micros ?? null),
      amountMicros: n(row?.auto_topup_amount_micros ?? null),
      monthlyCapMicros: n(row?.auto_topup_monthly_cap_micros ?? null),
      consecutiveFailures: row?.auto_topup_consecutive_failures ?? 0,
      disabledReason: row?.auto_topup_disabled_reason ?? null,
      customerId: row?.stripe_customer_id ?? null,
      paymentMethod: row?.payment_method_id === null || row?.payment_method_id === undefined
        ? null
        : { id: row.payment_method_id, brand: row.payment_method_brand, last4: row.payment_method_last4, savedAt: row.payment_method_saved_at ?? new Date(0) },
      monthMicros: toMicros(month?.used ?? 0n),
      last: lastRow === undefined ? null : { id: lastRow.id, status: lastRow.status, amountMicros: toMicros(lastRow.amount_micros), failureCode: lastRow.failure_code, createdAt: lastRow.created_at },
    };
  }

  /** Keeps the first customer saved for the account (two racing setups agree on one); returns it. */
  async saveCustomer(accountId: string, customerId: string): Promise<string> {
    const rows = await this.prisma.$queryRaw<{ stripe_customer_id: string }[]>`
      INSERT INTO billing_settings (account_id, stripe_customer_id, updated_at) VALUES (${accountId}, ${customerId}, clock_timestamp())
      ON CONFLICT (account_id) DO UPDATE SET stripe_customer_id = COALESCE(billing_settings.stripe_customer_id, EXCLUDED.stripe_customer_id),
        updated_at = clock_timestamp()
      RETURNING stripe_customer_id`;
    const saved = rows[0]?.stripe_customer_id;
    if (saved === undefined) throw new Error('billing_settings upsert returned no row');
    return saved;
  }

  /**
   * Saves the card a completed setup session left on the account's customer (the newest one
   * replaces the previous). A new card is the owner acting too: failures and notice cleared,
   * armed; `enabled` stays as the owner set it. False when the customer is not the account's.
   */
  async savePaymentMethod(accountId: string, card: { customerId: string; paymentMethodId: string; brand: string | null; last4: string | null }): Promise<boolean> {
    const changed = await this.prisma.$executeRaw`
      UPDATE billing_settings SET payment_method_id = ${card.paymentMethodId}, payment_method_brand = ${card.brand}, payment_method_last4 = ${card.last4},
        payment_method_saved_at = clock_timestamp(), auto_topup_armed = true, auto_topup_consecutive_failures = 0, auto_topup_disabled_reason = NULL,
        updated_at = clock_timestamp()
      WHERE account_id = ${accountId} AND stripe_customer_id = ${card.customerId}`;
    return changed > 0;
  }
}
