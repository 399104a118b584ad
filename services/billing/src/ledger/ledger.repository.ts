import type { SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import type { LedgerEntryKind } from '../generated/prisma/enums';

export type { LedgerEntryKind };

/** A ledger entry with money as integer micro-USD numbers (converted from BIGINT here). */
export interface LedgerEntryRecord {
  id: string;
  accountId: string;
  kind: LedgerEntryKind;
  amountMicros: Micros;
  balanceAfterMicros: Micros;
  reason: string | null;
  idempotencyKey: string | null;
  requestId: string | null;
  createdAt: Date;
  /** When the amount reached the spendable balance in Redis; null while still to apply. */
  appliedToSpendableAt: Date | null;
}

export interface BalanceRecord {
  accountId: string;
  balanceMicros: Micros;
  totalPurchasedMicros: Micros;
  totalGrantedMicros: Micros;
  totalSpentMicros: Micros;
}

export interface NewLedgerEntry {
  accountId: string;
  kind: LedgerEntryKind;
  /** Signed: credits positive, charges negative. */
  amountMicros: Micros;
  reason: string | null;
  idempotencyKey: string | null;
  requestId: string | null;
}

/** `no_balance_row`: the account has no balance row yet (the caller decides whether it exists). */
export type AppendOutcome =
  | { kind: 'created'; entry: LedgerEntryRecord }
  | { kind: 'repeated'; entry: LedgerEntryRecord }
  | { kind: 'no_balance_row' };

export interface LedgerPage {
  entries: LedgerEntryRecord[];
  hasMore: boolean;
}

/** A ledger_entries row as raw SQL returns it (shared by every repository that writes entries). */
export interface EntryRow {
  id: string;
  account_id: string;
  kind: LedgerEntryKind;
  amount_micros: bigint;
  balance_after_micros: bigint;
  reason: string | null;
  idempotency_key: string | null;
  request_id: string | null;
  created_at: Date;
  applied_to_spendable_at: Date | null;
}

/** What one settlement batch wrote (records already written before are skipped, not counted). */
export interface SettlementBatchResult {
  /** Settlements inserted now. */
  written: number;
  /** Records whose request id was already settled (a redelivery). */
  skipped: number;
  /** Micro-USD charged by the entries written now. */
  chargedMicros: Micros;
}

export function toMicros(value: bigint): Micros {
  const micros = Number(value);
  if (!Number.isSafeInteger(micros)) throw new RangeError('a BIGINT money value is outside the safe integer range');
  return micros;
}

export function entryFromRow(row: EntryRow): LedgerEntryRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    amountMicros: toMicros(row.amount_micros),
    balanceAfterMicros: toMicros(row.balance_after_micros),
    reason: row.reason,
    idempotencyKey: row.idempotency_key,
    requestId: row.request_id,
    createdAt: row.created_at,
    appliedToSpendableAt: row.applied_to_spendable_at,
  };
}

/** Which running total an entry of each kind moves, by how much (micro-USD). */
function totalsDelta(kind: LedgerEntryKind, amount: Micros): { purchased: Micros; granted: Micros; spent: Micros } {
  switch (kind) {
    case 'grant':
      return { purchased: 0, granted: amount, spent: 0 };
    case 'purchase':
    case 'stripe_refund':
    case 'dispute':
      // A refund or a dispute is a negative amount that takes back purchased credit.
      return { purchased: amount, granted: 0, spent: 0 };
    case 'search_charge':
    case 'search_refund':
      // A charge is negative (spent grows), a refund positive (spent shrinks).
      return { purchased: 0, granted: 0, spent: -amount };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

export const ENTRY_COLUMNS = Prisma.sql`id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key, request_id, created_at, applied_to_spendable_at`;

/** Balances and the append-only ledger. The only file that touches these tables. */
export class LedgerRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async findBalance(accountId: string): Promise<BalanceRecord | null> {
    const row = await this.prisma.accountBalance.findUnique({ where: { accountId } });
    if (row === null) return null;
    return {
      accountId: row.accountId,
      balanceMicros: toMicros(row.balanceMicros),
      totalPurchasedMicros: toMicros(row.totalPurchasedMicros),
      totalGrantedMicros: toMicros(row.totalGrantedMicros),
      totalSpentMicros: toMicros(row.totalSpentMicros),
    };
  }

  /** Creates the account's zero balance row unless it exists. */
  async ensureBalance(accountId: string): Promise<void> {
    await this.prisma.accountBalance.createMany({ data: [{ accountId }], skipDuplicates: true });
  }

  /**
   * Appends one entry and moves the balance in one transaction. The balance row is locked
   * first (SELECT ... FOR UPDATE), so entries of one account are serialised: each
   * entry's balance_after is the balance after it, and balance = sum of entries. With an
   * idempotency key, an entry already written under it is returned and nothing moves.
   */
  async appendEntry(input: NewLedgerEntry): Promise<AppendOutcome> {
    return this.prisma.$transaction(
      async (tx) => {
        const locked = await tx.$queryRaw<{ balance_micros: bigint }[]>`
          SELECT balance_micros FROM account_balances WHERE account_id = ${input.accountId} FOR UPDATE`;
        if (locked.length === 0) return { kind: 'no_balance_row' } as const;
        if (input.idempotencyKey !== null) {
          const existing = await tx.$queryRaw<EntryRow[]>`
            SELECT ${ENTRY_COLUMNS} FROM ledger_entries
            WHERE account_id = ${input.accountId}
              AND kind = CAST(${input.kind} AS "ledger_entry_kind")
              AND idempotency_key = ${input.idempotencyKey}`;
          const first = existing[0];
          if (first !== undefined) return { kind: 'repeated', entry: entryFromRow(first) } as const;
        }
        const delta = totalsDelta(input.kind, input.amountMicros);
        const updated = await tx.$queryRaw<{ balance_micros: bigint }[]>`
          UPDATE account_balances SET
            balance_micros = balance_micros + ${BigInt(input.amountMicros)},
            total_purchased_micros = total_purchased_micros + ${BigInt(delta.purchased)},
            total_granted_micros = total_granted_micros + ${BigInt(delta.granted)},
            total_spent_micros = total_spent_micros + ${BigInt(delta.spent)},
            updated_at = clock_timestamp()
          WHERE account_id = ${input.accountId}
          RETURNING balance_micros`;
        const balanceAfter = updated[0];
        if (balanceAfter === undefined) throw new Error('locked balance row vanished');
        // clock_timestamp() is read after the lock, so created_at grows with each entry
        // of an account and "newest first" is the order the balance moved in.
        const inserted = await tx.$queryRaw<EntryRow[]>`
          INSERT INTO ledger_entries
            (id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key, request_id, created_at)
          VALUES (
            ${newId('ledgerEntry')}, ${input.accountId}, CAST(${input.kind} AS "ledger_entry_kind"),
            ${BigInt(input.amountMicros)}, ${balanceAfter.balance_micros}, ${input.reason},
            ${input.idempotencyKey}, ${input.requestId}, clock_timestamp())
          RETURNING ${ENTRY_COLUMNS}`;
        const entry = inserted[0];
        if (entry === undefined) throw new Error('ledger insert returned no row');
        return { kind: 'created', entry: entryFromRow(entry) } as const;
      },
      { maxWait: 10_000, timeout: 10_000 },
    );
  }

  /** True when `entryId` is an entry of this account (a cursor must point at one). */
  async hasEntry(accountId: string, entryId: string): Promise<boolean> {
    const found = await this.prisma.ledgerEntry.findFirst({ where: { id: entryId, accountId }, select: { id: true } });
    return found !== null;
  }

  /** Newest first; `afterId` is the last entry of the previous page. */
  async listEntries(accountId: string, limit: number, afterId: string | null): Promise<LedgerPage> {
    const rows = await this.prisma.ledgerEntry.findMany({
      where: { accountId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      ...(afterId === null ? {} : { cursor: { id: afterId }, skip: 1 }),
    });
    const entries = rows.slice(0, limit).map((row) =>
      entryFromRow({
        id: row.id,
        account_id: row.accountId,
        kind: row.kind,
        amount_micros: row.amountMicros,
        balance_after_micros: row.balanceAfterMicros,
        reason: row.reason,
        idempotency_key: row.idempotencyKey,
        request_id: row.requestId,
        created_at: row.createdAt,
        applied_to_spendable_at: row.appliedToSpendableAt,
      }),
    );
    return { entries, hasMore: rows.length > limit };
  }

  /**
   * Writes one batch of an account's settlement records in ONE transaction: a settlements
   * row per search (its primary key is the exactly-once gate), the usage events of the
   * searches inserted now, one search_charge entry per such search with a non-zero charge,
   * and the durable balance and total_spent. A record whose request id is already settled
   * writes nothing, so redelivery is harmless. The balance row is locked first, as
   * appendEntry does, so charges and grants of one account are serialised.
   */
  async writeSettlements(accountId: string, records: readonly SettlementRecord[]): Promise<SettlementBatchResult> {
    const unique = [...new Map(records.map((record) => [record.requestId, record])).values()];
    if (unique.length === 0) return { written: 0, skipped: records.length, chargedMicros: 0 };
    return this.prisma.$transaction(
      async (tx) => {
        await tx.$executeRaw`INSERT INTO account_balances (account_id) VALUES (${accountId}) ON CONFLICT DO NOTHING`;
        const locked = await tx.$queryRaw<{ balance_micros: bigint }[]>`
          SELECT balance_micros FROM account_balances WHERE account_id = ${accountId} FOR UPDATE`;
        const start = locked[0];
        if (start === undefined) throw new Error('balance row missing right after it was ensured');
        const settlements = JSON.stringify(unique.map((r) => ({
          request_id: r.requestId, account_id: accountId, key_id: r.keyId, charged_micros: r.chargedMicros,
          attempt_count: r.attempts.length, settled_at: new Date(r.settledAtMs).toISOString(),
        })));
        const inserted = await tx.$queryRaw<{ request_id: string }[]>`
          INSERT INTO settlements (request_id, account_id, key_id, charged_micros, attempt_count, settled_at)
          SELECT s.request_id, s.account_id, s.key_id, s.charged_micros, s.attempt_count, s.settled_at
          FROM jsonb_to_recordset(${settlements}::jsonb)
            AS s(request_id text, account_id text, key_id text, charged_micros bigint, attempt_count int, settled_at timestamptz)
          ON CONFLICT (request_id) DO NOTHING
          RETURNING request_id`;
        const fresh = new Set(inserted.map((row) => row.request_id));
        const written = unique.filter((r) => fresh.has(r.requestId));
        const attempts = written.flatMap((r) => r.attempts.map((a) => ({
          id: newId('usageEvent'), request_id: r.requestId, attempt_index: a.index, account_id: accountId, key_id: r.keyId,
          model: a.model, provider: a.provider, source: a.source, status: a.status, error: a.error,
          reserved_micros: a.reservedMicros, charged_micros: a.chargedMicros, timed_out: a.timedOut, results: a.results,
          settled_at: new Date(r.settledAtMs).toISOString(),
        })));
        if (attempts.length > 0) {
          await tx.$executeRaw`
            INSERT INTO usage_events (id, request_id, attempt_index, account_id, key_id, model, provider, source, status,
              error, reserved_micros, charged_micros, timed_out, results, settled_at)
            SELECT u.id, u.request_id, u.attempt_index, u.account_id, u.key_id, u.model, u.provider, u.source, u.status,
              u.error, u.reserved_micros, u.charged_micros, u.timed_out, u.results, u.settled_at
            FROM jsonb_to_recordset(${JSON.stringify(attempts)}::jsonb)
              AS u(id text, request_id text, attempt_index int, account_id text, key_id text, model text, provider text,
                source text, status text, error text, reserved_micros bigint, charged_micros bigint, timed_out boolean,
                results int, settled_at timestamptz)
            ON CONFLICT (request_id, attempt_index) DO NOTHING`;
        }
        let balance = toMicros(start.balance_micros);
        const charges = written.filter((r) => r.chargedMicros > 0).map((r, ordinal) => {
          balance -= r.chargedMicros;
          return { id: newId('ledgerEntry'), ordinal, request_id: r.requestId, amount_micros: -r.chargedMicros, balance_after_micros: balance };
        });
        let charged = 0;
        if (charges.length > 0) {
          // applied_to_spendable_at is set at once: the gateway already moved the spendable
          // balance when it settled, so the outbox has nothing to apply for a charge.
          const entries = await tx.$queryRaw<{ amount_micros: bigint }[]>`
            INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key,
              request_id, created_at, applied_to_spendable_at)
            SELECT c.id, ${accountId}, CAST('search_charge' AS "ledger_entry_kind"), c.amount_micros, c.balance_after_micros,
              NULL, c.request_id, c.request_id, clock_timestamp(), clock_timestamp()
            FROM jsonb_to_recordset(${JSON.stringify(charges)}::jsonb)
              AS c(id text, ordinal int, request_id text, amount_micros bigint, balance_after_micros bigint)
            ORDER BY c.ordinal
            ON CONFLICT (account_id, kind, idempotency_key) DO NOTHING
            RETURNING amount_micros`;
          charged = -entries.reduce((sum, row) => sum + toMicros(row.amount_micros), 0);
          await tx.$executeRaw`
            UPDATE account_balances SET
              balance_micros = balance_micros - ${BigInt(charged)},
              total_spent_micros = total_spent_micros + ${BigInt(charged)},
              updated_at = clock_timestamp()
            WHERE account_id = ${accountId}`;
        }
        return { written: written.length, skipped: records.length - written.length, chargedMicros: charged };
      },
      { maxWait: 10_000, timeout: 30_000 },
    );
  }

  /** Entries whose amount has not reached the spendable balance yet, oldest first. */
  async listUnappliedEntries(limit: number): Promise<LedgerEntryRecord[]> {
    const rows = await this.prisma.$queryRaw<EntryRow[]>`
      SELECT ${ENTRY_COLUMNS} FROM ledger_entries
      WHERE applied_to_spendable_at IS NULL
      ORDER BY created_at, id
      LIMIT ${limit}`;
    return rows.map(entryFromRow);
  }

  /** Records that the entry's amount reached the spendable balance. */
  async markApplied(entryId: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE ledger_entries SET applied_to_spendable_at = clock_timestamp()
      WHERE id = ${entryId} AND applied_to_spendable_at IS NULL`;
  }
}
