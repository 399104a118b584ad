import type { Micros } from '@svc/money';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import type { EntryRow, LedgerEntryRecord } from '../db/ledger-entry-row';

/** At most this many ids are listed per kind of mismatch (the counts are always complete). */
export const MAX_LISTED = 100;

export interface CountSum {
  count: number;
  micros: Micros;
}

export interface StripeFigures {
  paidSessions: CountSum;
  /** Succeeded automatic top-ups (each a PaymentIntent credited as a purchase entry). */
  autoTopups: CountSum;
  purchaseEntries: CountSum;
  /** Paid sessions, or succeeded top-ups, without a purchase entry of the same amount (Stripe session or PaymentIntent ids). */
  unmatchedSessions: string[];
  /** Purchase entries without a paid session or succeeded top-up of the same amount (ledger entry ids). */
  unmatchedEntries: string[];
  /** What sessions record as refunded or disputed vs the stripe_refund + dispute entries (positive). */
  takenBackSessionsMicros: Micros;
  takenBackEntriesMicros: Micros;
}

export interface UsageFigures {
  settlements: CountSum;
  usageEventsChargedMicros: Micros;
  /** What platform attempts were charged (kind search_charge). */
  searchChargeEntries: CountSum;
  /** What BYOK attempts were charged (kind byok_fee). */
  byokFeeEntries: CountSum;
  /** The BYOK attempts' charges in usage_events (equal to byokFeeEntries when balanced). */
  usageEventsByokMicros: Micros;
  /** Settled searches whose charge differs from their attempts' charges or from their entries (or whose BYOK part does). */
  mismatchedRequests: string[];
  /** What key_spend_days holds (each key's spend per UTC day, kept by a trigger on settlements; equal to settlements when balanced). */
  keySpendMicros: Micros;
}

export interface LedgerFigures {
  accounts: number;
  /** Accounts whose balance is not the sum of their entries. */
  accountsOffSum: { accountId: string; balanceMicros: Micros; entriesMicros: Micros }[];
}

/** A ledger entry as the export writes it (without its spendable mark). */
export interface LedgerExportRow extends Omit<LedgerEntryRecord, 'appliedToSpendableAt'> {
  /** created_at exactly (microseconds), as the next page's cursor. */
  createdAtText: string;
}

const n = (value: bigint | null | undefined): number => Number(value ?? 0n);

/** Read-only cross-checks of billing's own tables for finance. */
export class FinanceRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async stripeFigures(): Promise<StripeFigures> {
    const [sessions] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null; back: bigint | null }[]>`
      SELECT count(*) FILTER (WHERE status = 'paid') AS c, sum(credit_micros) FILTER (WHERE status = 'paid') AS s,
        sum(refunded_micros + disputed_micros) AS back
      FROM checkout_sessions`;
    const [topups] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null; back: bigint | null }[]>`
      SELECT count(*) AS c, sum(amount_micros) AS s, sum(refunded_micros + disputed_micros) AS back
      FROM auto_topups WHERE status = 'succeeded'`;
    const [entries] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null; back: bigint | null }[]>`
      SELECT count(*) FILTER (WHERE kind = 'purchase') AS c, sum(amount_micros) FILTER (WHERE kind = 'purchase') AS s,
        -sum(amount_micros) FILTER (WHERE kind IN ('stripe_refund', 'dispute')) AS back
      FROM ledger_entries WHERE kind IN ('purchase', 'stripe_refund', 'dispute')`;
    // A paid source (a Checkout session by its id, a succeeded top-up by its PaymentIntent) and its purchase entry, matched on the key and the amount.
    const unmatchedSessions = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH paid AS (
        SELECT stripe_session_id AS key, account_id, credit_micros AS micros FROM checkout_sessions WHERE status = 'paid'
        UNION ALL
        SELECT payment_intent_id, account_id, amount_micros FROM auto_topups WHERE status = 'succeeded'
      )
      SELECT p.key AS id FROM paid p
      LEFT JOIN ledger_entries e ON e.kind = 'purchase' AND e.idempotency_key = p.key AND e.account_id = p.account_id
      WHERE e.id IS NULL OR e.amount_micros <> p.micros
      ORDER BY 1 LIMIT ${MAX_LISTED}`;
    const unmatchedEntries = await this.prisma.$queryRaw<{ id: string }[]>`
      WITH paid AS (
        SELECT stripe_session_id AS key, account_id, credit_micros AS micros FROM checkout_sessions WHERE status = 'paid'
        UNION ALL
        SELECT payment_intent_id, account_id, amount_micros FROM auto_topups WHERE status = 'succeeded'
      )
      SELECT e.id FROM ledger_entries e
      LEFT JOIN paid p ON p.key = e.idempotency_key AND p.account_id = e.account_id
      WHERE e.kind = 'purchase' AND (p.key IS NULL OR p.micros <> e.amount_micros)
      ORDER BY 1 LIMIT ${MAX_LISTED}`;
    return {
      paidSessions: { count: n(sessions?.c), micros: n(sessions?.s) },
      autoTopups: { count: n(topups?.c), micros: n(topups?.s) },
      purchaseEntries: { count: n(entries?.c), micros: n(entries?.s) },
      unmatchedSessions: unmatchedSessions.map((r) => r.id),
      unmatchedEntries: unmatchedEntries.map((r) => r.id),
      takenBackSessionsMicros: n(sessions?.back) + n(topups?.back),
      takenBackEntriesMicros: n(entries?.back),
    };
  }

  async usageFigures(): Promise<UsageFigures> {
    const [settled] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null }[]>`
      SELECT count(*) AS c, sum(charged_micros) AS s FROM settlements`;
    const [events] = await this.prisma.$queryRaw<{ s: bigint | null }[]>`SELECT sum(charged_micros) AS s FROM usage_events`;
    const [charges] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null }[]>`
      SELECT count(*) AS c, -sum(amount_micros) AS s FROM ledger_entries WHERE kind = 'search_charge'`;
    const [fees] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null }[]>`
      SELECT count(*) AS c, -sum(amount_micros) AS s FROM ledger_entries WHERE kind = 'byok_fee'`;
    const [byokEvents] = await this.prisma.$queryRaw<{ s: bigint | null }[]>`SELECT sum(charged_micros) AS s FROM usage_events WHERE source = 'byok'`;
    const [keySpend] = await this.prisma.$queryRaw<{ s: bigint | null }[]>`SELECT sum(spent_micros) AS s FROM key_spend_days`;
    // Per search: its usage events, and its search_charge plus byok_fee entries, each equal to its settlement;
    // and its byok_fee entry equal to what its byok attempts were charged.
    const mismatched = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT s.request_id AS id FROM settlements s
      LEFT JOIN (SELECT request_id, sum(charged_micros) AS charged, sum(charged_micros) FILTER (WHERE source = 'byok') AS byok
                 FROM usage_events GROUP BY request_id) u ON u.request_id = s.request_id
      LEFT JOIN (SELECT account_id, idempotency_key, -sum(amount_micros) AS charged, -sum(amount_micros) FILTER (WHERE kind = 'byok_fee') AS byok
                 FROM ledger_entries WHERE kind IN ('search_charge', 'byok_fee') GROUP BY account_id, idempotency_key) e
        ON e.account_id = s.account_id AND e.idempotency_key = s.request_id
      WHERE coalesce(u.charged, 0) <> s.charged_micros OR coalesce(e.charged, 0) <> s.charged_micros OR coalesce(u.byok, 0) <> coalesce(e.byok, 0)
      ORDER BY 1 LIMIT ${MAX_LISTED}`;
    return {
      settlements: { count: n(settled?.c), micros: n(settled?.s) },
      usageEventsChargedMicros: n(events?.s),
      searchChargeEntries: { count: n(charges?.c), micros: n(charges?.s) },
      byokFeeEntries: { count: n(fees?.c), micros: n(fees?.s) },
      usageEventsByokMicros: n(byokEvents?.s),
      mismatchedRequests: mismatched.map((r) => r.id),
      keySpendMicros: n(keySpend?.s),
    };
  }

  async ledgerFigures(): Promise<LedgerFigures> {
    const [accounts] = await this.prisma.$queryRaw<{ c: bigint }[]>`SELECT count(*) AS c FROM account_balances`;
    const off = await this.prisma.$queryRaw<{ account_id: string; balance: bigint; entries: bigint }[]>`
      SELECT b.account_id, b.balance_micros AS balance, coalesce(e.total, 0)::bigint AS entries
      FROM account_balances b
      LEFT JOIN (SELECT account_id, sum(amount_micros) AS total FROM ledger_entries GROUP BY account_id) e ON e.account_id = b.account_id
      WHERE b.balance_micros <> coalesce(e.total, 0)
      ORDER BY 1 LIMIT ${MAX_LISTED}`;
    return {
      accounts: n(accounts?.c),
      accountsOffSum: off.map((r) => ({ accountId: r.account_id, balanceMicros: Number(r.balance), entriesMicros: Number(r.entries) })),
    };
  }

  /** Entries created in [start, end), optionally of one account, oldest first; keyset pages. */
  async exportPage(filter: { start: Date; end: Date; accountId: string | null }, after: { createdAtText: string; id: string } | null, limit: number): Promise<LedgerExportRow[]> {
    const byAccount = filter.accountId === null ? Prisma.empty : Prisma.sql`AND account_id = ${filter.accountId}`;
    const afterCursor = after === null ? Prisma.empty : Prisma.sql`AND (created_at, id) > (CAST(${after.createdAtText} AS timestamptz), ${after.id})`;
    const rows = await this.prisma.$queryRaw<(Omit<EntryRow, 'applied_to_spendable_at'> & { created_at_text: string })[]>`
      SELECT id, created_at, created_at::text AS created_at_text, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key, request_id
      FROM ledger_entries
      WHERE created_at >= ${filter.start} AND created_at < ${filter.end} ${byAccount} ${afterCursor}
      ORDER BY created_at, id LIMIT ${limit}`;
    return rows.map((r) => ({
      id: r.id, createdAt: r.created_at, createdAtText: r.created_at_text, accountId: r.account_id, kind: r.kind, amountMicros: Number(r.amount_micros),
      balanceAfterMicros: Number(r.balance_after_micros), reason: r.reason, idempotencyKey: r.idempotency_key, requestId: r.request_id,
    }));
  }
}
