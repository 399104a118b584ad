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
  /** What settled research runs were charged by their entries: -(research_hold + research_release), per run (docs/decisions/0062). */
  researchChargeEntries: CountSum;
  /** What BYOK attempts were charged (kind byok_fee). */
  byokFeeEntries: CountSum;
  /** The BYOK attempts' charges in usage_events (equal to byokFeeEntries when balanced). */
  usageEventsByokMicros: Micros;
  /** Settled searches whose charge differs from their attempts' charges or from their entries (or whose BYOK part does). */
  mismatchedRequests: string[];
  /** What key_spend_days holds (each key's spend per UTC day, kept by a trigger on settlements; equal to settlements when balanced). */
  keySpendMicros: Micros;
}

/** Research runs (docs/decisions/0062): their holds and releases against what they were charged, and what the providers charged. */
export interface ResearchFigures {
  settledRuns: CountSum;
  /** -(hold + release) of the settled runs: equal to settledRuns.micros when balanced. */
  settledEntriesMicros: Micros;
  /** Runs not settled yet, and what their holds take (the research_hold entries without a release). */
  openRuns: CountSum;
  openHoldEntriesMicros: Micros;
  /** What the providers reported the settled runs cost the platform. */
  providerCostMicros: Micros;
  /** Settled runs that cost the platform more than they were charged (a provider over the cap): the loss, listed. */
  lossMicros: Micros;
  lossRuns: { runId: string; providerCostMicros: Micros; chargedMicros: Micros; lossMicros: Micros }[];
  /** Settled runs whose entries or settlements row disagree with what they were charged (listed). */
  mismatchedRuns: string[];
  /** Runs ended at the bound whose provider reported no cost (a provider without cancel): the provider may still bill them. */
  abandonedRuns: string[];
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
    // A settled research run's charge is its hold less its release (both keyed by the run id).
    const [research] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null }[]>`
      SELECT count(DISTINCT e.idempotency_key) AS c, -sum(e.amount_micros) AS s FROM ledger_entries e
      JOIN settlements st ON st.request_id = e.idempotency_key AND st.account_id = e.account_id
      WHERE e.kind IN ('research_hold', 'research_release')`;
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
                 FROM ledger_entries WHERE kind IN ('search_charge', 'byok_fee', 'research_hold', 'research_release') GROUP BY account_id, idempotency_key) e
        ON e.account_id = s.account_id AND e.idempotency_key = s.request_id
      WHERE coalesce(u.charged, 0) <> s.charged_micros OR coalesce(e.charged, 0) <> s.charged_micros OR coalesce(u.byok, 0) <> coalesce(e.byok, 0)
      ORDER BY 1 LIMIT ${MAX_LISTED}`;
    return {
      settlements: { count: n(settled?.c), micros: n(settled?.s) },
      usageEventsChargedMicros: n(events?.s),
      searchChargeEntries: { count: n(charges?.c), micros: n(charges?.s) },
      researchChargeEntries: { count: n(research?.c), micros: n(research?.s) },
      byokFeeEntries: { count: n(fees?.c), micros: n(fees?.s) },
      usageEventsByokMicros: n(byokEvents?.s),
      mismatchedRequests: mismatched.map((r) => r.id),
      keySpendMicros: n(keySpend?.s),
    };
  }

  async researchFigures(): Promise<ResearchFigures> {
    const [settled] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null; p: bigint | null }[]>`
      SELECT count(*) AS c, sum(cost_micros) AS s, sum(provider_cost_micros) AS p FROM research_runs WHERE settled_at IS NOT NULL`;
    const [entries] = await this.prisma.$queryRaw<{ s: bigint | null }[]>`
      SELECT -sum(e.amount_micros) AS s FROM ledger_entries e JOIN research_runs r ON r.id = e.idempotency_key AND r.account_id = e.account_id
      WHERE e.kind IN ('research_hold', 'research_release') AND r.settled_at IS NOT NULL`;
    const [open] = await this.prisma.$queryRaw<{ c: bigint; s: bigint | null; e: bigint | null }[]>`
      SELECT count(*) AS c, sum(r.held_micros) AS s, -sum(e.amount_micros) AS e FROM research_runs r
      LEFT JOIN ledger_entries e ON e.kind = 'research_hold' AND e.idempotency_key = r.id AND e.account_id = r.account_id
      WHERE r.settled_at IS NULL`;
    const [loss] = await this.prisma.$queryRaw<{ s: bigint | null }[]>`
      SELECT sum(provider_cost_micros - cost_micros) AS s FROM research_runs WHERE settled_at IS NOT NULL AND provider_cost_micros > cost_micros`;
    const losses = await this.prisma.$queryRaw<{ id: string; provider_cost_micros: bigint; cost_micros: bigint }[]>`
      SELECT id, provider_cost_micros, cost_micros FROM research_runs WHERE settled_at IS NOT NULL AND provider_cost_micros > cost_micros
      ORDER BY settled_at DESC, id LIMIT ${MAX_LISTED}`;
    // Per settled run: its hold is what it held, its hold plus release what it cost, its settlements row the same cost.
    const mismatched = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT r.id FROM research_runs r
      LEFT JOIN (SELECT account_id, idempotency_key, sum(amount_micros) FILTER (WHERE kind = 'research_hold') AS hold, sum(amount_micros) AS net
                 FROM ledger_entries WHERE kind IN ('research_hold', 'research_release') GROUP BY account_id, idempotency_key) e
        ON e.account_id = r.account_id AND e.idempotency_key = r.id
      LEFT JOIN settlements st ON st.request_id = r.id
      WHERE r.settled_at IS NOT NULL AND (coalesce(e.hold, 0) <> -r.held_micros OR coalesce(e.net, 0) <> -r.cost_micros OR coalesce(st.charged_micros, -1) <> r.cost_micros)
      ORDER BY 1 LIMIT ${MAX_LISTED}`;
    const abandoned = await this.prisma.$queryRaw<{ id: string }[]>`
      SELECT id FROM research_runs WHERE settled_at IS NOT NULL AND error LIKE '%abandoned at the provider%' ORDER BY settled_at DESC LIMIT ${MAX_LISTED}`;
    return {
      settledRuns: { count: n(settled?.c), micros: n(settled?.s) },
      settledEntriesMicros: n(entries?.s),
      openRuns: { count: n(open?.c), micros: n(open?.s) },
      openHoldEntriesMicros: n(open?.e),
      providerCostMicros: n(settled?.p),
      lossMicros: n(loss?.s),
      lossRuns: losses.map((r) => ({ runId: r.id, providerCostMicros: Number(r.provider_cost_micros), chargedMicros: Number(r.cost_micros), lossMicros: Number(r.provider_cost_micros - r.cost_micros) })),
      mismatchedRuns: mismatched.map((r) => r.id),
      abandonedRuns: abandoned.map((r) => r.id),
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
