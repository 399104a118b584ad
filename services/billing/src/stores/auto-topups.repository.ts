import { LIMITS } from '@svc/contracts';
import { newId } from '@svc/ids';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import { emitEvent } from './event-emitter';
import { toMicros } from '../db/account-lock';
import { ENTRY_COLUMNS, entryFromRow } from './ledger.repository';
import type { EntryRow, LedgerEntryRecord } from './ledger.repository';
import { appendStripeEntryLocked } from './purchases.repository';

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

/** What opening a crossing did: a pending top-up to charge, a refusal by the cap, or nothing. */
export type OpenOutcome = { kind: 'pending'; id: string } | { kind: 'skipped'; id: string } | { kind: 'none' };

export type SucceedOutcome =
  | { kind: 'granted'; entry: LedgerEntryRecord }
  | { kind: 'already_granted'; entry: LedgerEntryRecord }
  | { kind: 'rejected'; reason: string }
  | { kind: 'unknown' };

export type FailOutcome = { kind: 'failed'; disabled: boolean } | { kind: 'unchanged' } | { kind: 'unknown' };

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

export interface AutoTopupChange {
  enabled?: boolean;
  thresholdMicros?: Micros;
  amountMicros?: Micros;
  monthlyCapMicros?: Micros;
}

/** The UTC calendar month (YYYY-MM) of the database's clock, as the cap counts it. */
const MONTH_SQL_FRAGMENT = Prisma.raw("to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM')");

const n = (value: bigint | null): Micros | null => (value === null ? null : toMicros(value));

/**
 * auto_topups and the automatic top-up columns of billing_settings (docs/decisions/0028).
 * Every decision that touches money is taken in PostgreSQL under the account's
 * billing_settings row lock (SELECT ... FOR UPDATE): whether a crossing makes a top-up, what
 * the month's top-ups add up to against the cap, whether one is already in flight (also a
 * partial unique index), and the failure count. The credit goes through purchase_grants,
 * keyed by the PaymentIntent, like a Checkout purchase.
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

  /** Accounts whose balance crossed below the threshold while armed (candidates; open() decides). */
  async crossed(limit: number): Promise<string[]> {
    const rows = await this.prisma.$queryRaw<{ account_id: string }[]>`
      SELECT s.account_id FROM billing_settings s LEFT JOIN account_balances b ON b.account_id = s.account_id
      WHERE s.auto_topup_enabled AND s.auto_topup_armed AND s.payment_method_id IS NOT NULL
        AND COALESCE(b.balance_micros, 0) < s.auto_topup_threshold_micros
      ORDER BY s.account_id LIMIT ${limit}`;
    return rows.map((r) => r.account_id);
  }

  /**
   * One crossing, decided under the account's settings row lock: still enabled, armed, with
   * a card and below the threshold? Then, unless a top-up is already in flight (the account
   * stays armed and is looked at again once it settles), the crossing is consumed (disarmed)
   * and either a pending top-up is written or, when it would take the UTC month's pending
   * and succeeded top-ups past the cap, a skipped one with its auto_topup.failed event.
   */
  async open(accountId: string): Promise<OpenOutcome> {
    return this.prisma.$transaction(async (tx) => {
      const locked = await tx.$queryRaw<{ amount: bigint; cap: bigint; threshold: bigint; balance: bigint }[]>`
        SELECT s.auto_topup_amount_micros AS amount, s.auto_topup_monthly_cap_micros AS cap, s.auto_topup_threshold_micros AS threshold,
          COALESCE((SELECT balance_micros FROM account_balances WHERE account_id = s.account_id), 0) AS balance
        FROM billing_settings s
        WHERE s.account_id = ${accountId} AND s.auto_topup_enabled AND s.auto_topup_armed AND s.payment_method_id IS NOT NULL
          AND s.auto_topup_amount_micros IS NOT NULL AND s.auto_topup_monthly_cap_micros IS NOT NULL AND s.auto_topup_threshold_micros IS NOT NULL
        FOR UPDATE OF s`;
      const settings = locked[0];
      if (settings === undefined || settings.balance >= settings.threshold) return { kind: 'none' } as const;
      const inFlight = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM auto_topups WHERE account_id = ${accountId} AND status = 'pending'`;
      if (inFlight.length > 0) return { kind: 'none' } as const;
      await tx.$executeRaw`UPDATE billing_settings SET auto_topup_armed = false, updated_at = clock_timestamp() WHERE account_id = ${accountId}`;
      const [month] = await tx.$queryRaw<{ month: string; used: bigint }[]>`
        SELECT m.month, COALESCE((SELECT sum(amount_micros) FROM auto_topups
          WHERE account_id = ${accountId} AND month = m.month AND status IN ('pending', 'succeeded')), 0)::bigint AS used
        FROM (SELECT ${MONTH_SQL_FRAGMENT} AS month) m`;
      if (month === undefined) throw new Error('month query returned no row');
      const id = newId('autoTopup');
      if (month.used + settings.amount > settings.cap) {
        await tx.$executeRaw`
          INSERT INTO auto_topups (id, account_id, status, amount_micros, month, failure_code, settled_at)
          VALUES (${id}, ${accountId}, 'skipped', ${settings.amount}, ${month.month}, 'monthly_cap_reached', clock_timestamp())`;
        await emitEvent(tx, {
          accountId,
          type: 'auto_topup.failed',
          data: {
            auto_topup_id: id, amount_usd: microsToUsd(toMicros(settings.amount)), reason: 'monthly_cap_reached', failure_code: 'monthly_cap_reached',
            payment_intent_id: null, balance_usd: microsToUsd(toMicros(settings.balance)), month: month.month,
            month_to_date_usd: microsToUsd(toMicros(month.used)), monthly_cap_usd: microsToUsd(toMicros(settings.cap)), auto_topup_disabled: false,
          },
        });
        return { kind: 'skipped', id } as const;
      }
      await tx.$executeRaw`
        INSERT INTO auto_topups (id, account_id, status, amount_micros, month)
        VALUES (${id}, ${accountId}, 'pending', ${settings.amount}, ${month.month})`;
      return { kind: 'pending', id } as const;
    }, { maxWait: 10_000, timeout: 10_000 });
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

  /**
   * Credits a succeeded PaymentIntent of top-up `id` once. The top-up row is locked first, so
   * the synchronous answer and the webhook (in any order, any number of times) take turns;
   * the purchase_grants row keyed by the PaymentIntent is the gate, as for a Checkout
   * purchase. In the same transaction: the purchase entry and balance, the top-up succeeded,
   * the failure count reset, and auto_topup.succeeded.
   */
  async succeed(id: string, intent: { id: string; amountCents: number; currency: string }, source: string, requestId: string | null): Promise<SucceedOutcome> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ account_id: string; status: string; amount_micros: bigint; payment_intent_id: string | null }[]>`
        SELECT account_id, status, amount_micros, payment_intent_id FROM auto_topups WHERE id = ${id} FOR UPDATE`;
      const row = rows[0];
      if (row === undefined) return { kind: 'unknown' } as const;
      const amountMicros = toMicros(row.amount_micros);
      if (intent.currency !== 'usd' || intent.amountCents * 10_000 !== amountMicros) return { kind: 'rejected', reason: 'the PaymentIntent does not carry the top-up amount in usd' } as const;
      const entryId = newId('ledgerEntry');
      const gate = await tx.$queryRaw<{ stripe_session_id: string }[]>`
        INSERT INTO purchase_grants (stripe_session_id, account_id, ledger_entry_id, amount_micros, event_id)
        VALUES (${intent.id}, ${row.account_id}, ${entryId}, ${row.amount_micros}, ${source})
        ON CONFLICT (stripe_session_id) DO NOTHING
        RETURNING stripe_session_id`;
      if (gate.length === 0) {
        const existing = await tx.$queryRaw<EntryRow[]>`
          SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE id = (SELECT ledger_entry_id FROM purchase_grants WHERE stripe_session_id = ${intent.id})`;
        const first = existing[0];
        if (first === undefined) throw new Error('purchase grant without its ledger entry');
        return { kind: 'already_granted', entry: entryFromRow(first) } as const;
      }
      await tx.$executeRaw`INSERT INTO account_balances (account_id) VALUES (${row.account_id}) ON CONFLICT DO NOTHING`;
      const entry = await appendStripeEntryLocked(tx, {
        id: entryId, accountId: row.account_id, kind: 'purchase', amountMicros, reason: 'Automatic top-up', idempotencyKey: intent.id, requestId,
      });
      // A second PaymentIntent for one top-up (only if Stripe forgot an idempotency key) is credited too: money taken is money credited.
      await tx.$executeRaw`
        UPDATE auto_topups SET status = 'succeeded', payment_intent_id = COALESCE(payment_intent_id, ${intent.id}), ledger_entry_id = COALESCE(ledger_entry_id, ${entry.id}),
          failure_code = NULL, settled_at = COALESCE(settled_at, clock_timestamp()), updated_at = clock_timestamp()
        WHERE id = ${id}`;
      // Back at or above the threshold: armed at once, so the next fall is a new crossing even before the next tick sees this balance.
      await tx.$executeRaw`
        UPDATE billing_settings SET auto_topup_consecutive_failures = 0,
          auto_topup_armed = auto_topup_armed OR ${BigInt(entry.balanceAfterMicros)} >= auto_topup_threshold_micros, updated_at = clock_timestamp()
        WHERE account_id = ${row.account_id}`;
      await emitEvent(tx, {
        accountId: row.account_id,
        type: 'auto_topup.succeeded',
        data: {
          auto_topup_id: id, amount_usd: microsToUsd(amountMicros), balance_usd: microsToUsd(entry.balanceAfterMicros), ledger_entry_id: entry.id,
          payment_intent_id: intent.id,
        },
      });
      return { kind: 'granted', entry } as const;
    }, { maxWait: 10_000, timeout: 10_000 });
  }

  /**
   * A pending top-up's payment failed (declined, authentication required, cancelled): it ends
   * failed, the account's consecutive failures go up by one, and at LIMITS.autoTopupFailures
   * automatic top-up turns itself off (`disabled_reason: payment_failed`) until the owner
   * saves its settings again; auto_topup.failed says which. A top-up no longer pending is
   * left as it is (a repeated or late failure changes nothing).
   */
  async fail(id: string, failureCode: string, paymentIntentId: string | null): Promise<FailOutcome> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ account_id: string; status: string; amount_micros: bigint }[]>`
        SELECT account_id, status, amount_micros FROM auto_topups WHERE id = ${id} FOR UPDATE`;
      const row = rows[0];
      if (row === undefined) return { kind: 'unknown' } as const;
      if (row.status !== 'pending') return { kind: 'unchanged' } as const;
      await tx.$executeRaw`
        UPDATE auto_topups SET status = 'failed', failure_code = ${failureCode}, payment_intent_id = COALESCE(payment_intent_id, ${paymentIntentId}),
          settled_at = clock_timestamp(), updated_at = clock_timestamp()
        WHERE id = ${id}`;
      const [settings] = await tx.$queryRaw<{ failures: number; enabled: boolean }[]>`
        UPDATE billing_settings SET auto_topup_consecutive_failures = auto_topup_consecutive_failures + 1,
          auto_topup_enabled = auto_topup_enabled AND auto_topup_consecutive_failures + 1 < ${LIMITS.autoTopupFailures.max},
          auto_topup_disabled_reason = CASE WHEN auto_topup_consecutive_failures + 1 >= ${LIMITS.autoTopupFailures.max} THEN 'payment_failed' ELSE auto_topup_disabled_reason END,
          updated_at = clock_timestamp()
        WHERE account_id = ${row.account_id}
        RETURNING auto_topup_consecutive_failures AS failures, auto_topup_enabled AS enabled`;
      const balance = await tx.$queryRaw<{ balance_micros: bigint }[]>`SELECT balance_micros FROM account_balances WHERE account_id = ${row.account_id}`;
      const disabled = settings !== undefined && !settings.enabled;
      await emitEvent(tx, {
        accountId: row.account_id,
        type: 'auto_topup.failed',
        data: {
          auto_topup_id: id, amount_usd: microsToUsd(toMicros(row.amount_micros)), reason: 'payment_failed', failure_code: failureCode,
          payment_intent_id: paymentIntentId, balance_usd: microsToUsd(toMicros(balance[0]?.balance_micros ?? 0n)),
          consecutive_failures: settings?.failures ?? 0, auto_topup_disabled: disabled,
        },
      });
      return { kind: 'failed', disabled } as const;
    }, { maxWait: 10_000, timeout: 10_000 });
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

  /**
   * Saves the owner's change. Saving is the owner acting: the failure count and the notice
   * are cleared and the crossing is armed again (if the balance is already below the
   * threshold, the next evaluation makes a top-up). The caller validated the merged result.
   */
  async update(accountId: string, change: AutoTopupChange): Promise<void> {
    const big = (value: Micros | undefined): bigint | null => (value === undefined ? null : BigInt(value));
    await this.prisma.$executeRaw`
      INSERT INTO billing_settings (account_id, auto_topup_enabled, auto_topup_threshold_micros, auto_topup_amount_micros, auto_topup_monthly_cap_micros,
        auto_topup_armed, auto_topup_consecutive_failures, auto_topup_disabled_reason, updated_at)
      VALUES (${accountId}, ${change.enabled ?? false}, ${big(change.thresholdMicros)}, ${big(change.amountMicros)}, ${big(change.monthlyCapMicros)},
        true, 0, NULL, clock_timestamp())
      ON CONFLICT (account_id) DO UPDATE SET
        auto_topup_enabled = COALESCE(${change.enabled ?? null}::boolean, billing_settings.auto_topup_enabled),
        auto_topup_threshold_micros = COALESCE(${big(change.thresholdMicros)}::bigint, billing_settings.auto_topup_threshold_micros),
        auto_topup_amount_micros = COALESCE(${big(change.amountMicros)}::bigint, billing_settings.auto_topup_amount_micros),
        auto_topup_monthly_cap_micros = COALESCE(${big(change.monthlyCapMicros)}::bigint, billing_settings.auto_topup_monthly_cap_micros),
        auto_topup_armed = true, auto_topup_consecutive_failures = 0, auto_topup_disabled_reason = NULL, updated_at = clock_timestamp()`;
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
