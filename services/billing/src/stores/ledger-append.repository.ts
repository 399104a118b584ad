import { recordKind } from '@svc/contracts';
import type { SettledAttempt, SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import type { Pool } from 'pg';
import { toMicros } from '../db/account-lock';
import { ENTRY_COLUMNS, entryFromRow } from '../db/ledger-entry-row';
import type { EntryRow, LedgerEntryKind, LedgerEntryRecord } from '../db/ledger-entry-row';
import { pgArray } from '../db/pg-array';
import { inTransaction } from '../db/prisma.repository';
import type { Tx } from '../db/transactions';

/** One entry to write: the account, its kind, the signed amount and its labels (the port gives it its id unless it has one). */
export interface EntryToWrite {
  id?: string;
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

/** What one settlement batch wrote (records already written before are skipped, not counted). */
export interface SettlementBatchResult {
  /** Settlements inserted now. */
  written: number;
  /** Records whose request id was already settled (a redelivery). */
  skipped: number;
  /** Micro-USD charged by the entries written now. */
  chargedMicros: Micros;
}

/** One attempt of a settled research run, as its usage event records it. */
export interface ResearchUsageAttempt {
  index: number;
  model: string;
  provider: string;
  status: 'success' | 'error' | 'skipped';
  error: string | null;
  reservedMicros: Micros;
  chargedMicros: Micros;
  results: number;
}

/** A research run's settlement: its release entry, its settlements row and its usage events (docs/decisions/0062). */
export interface ResearchSettlement {
  runId: string;
  accountId: string;
  keyId: string;
  /** What the hold gives back: the held amount less what the run cost (>= 0). */
  releaseMicros: Micros;
  chargedMicros: Micros;
  settledAt: Date;
  attempts: readonly ResearchUsageAttempt[];
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
    case 'byok_fee':
    case 'search_refund':
    case 'research_hold':
    case 'research_release':
      // A charge is negative (spent grows), a refund positive (spent shrinks). A research run's
      // hold counts as spent until its release gives back what the run did not cost.
      return { purchased: 0, granted: 0, spent: -amount };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

/** The usage_events columns of one batch, as arrays for unnest (one row per attempt). */
class UsageColumns {
  private readonly requestId: string[] = [];
  private readonly attemptIndex: number[] = [];
  private readonly keyId: string[] = [];
  private readonly model: string[] = [];
  private readonly provider: string[] = [];
  private readonly source: string[] = [];
  private readonly status: string[] = [];
  private readonly error: (string | null)[] = [];
  private readonly reserved: number[] = [];
  private readonly charged: number[] = [];
  private readonly timedOut: boolean[] = [];
  private readonly results: number[] = [];
  private readonly cache: (string | null)[] = [];
  private readonly saved: number[] = [];
  private readonly settledAt: string[] = [];
  private readonly kind: string[] = [];
  /** Whether any attempt of the batch is not a search's (else its kinds go as an empty array: each row `search`). */
  private anyOtherKind = false;

  get size(): number {
    return this.requestId.length;
  }

  add(record: SettlementRecord, attempt: SettledAttempt, settledAt: string): void {
    this.requestId.push(record.requestId);
    this.attemptIndex.push(attempt.index);
    this.keyId.push(record.keyId);
    this.model.push(attempt.model);
    this.provider.push(attempt.provider);
    this.source.push(attempt.source);
    this.status.push(attempt.status);
    this.error.push(attempt.error);
    this.reserved.push(attempt.reservedMicros);
    this.charged.push(attempt.chargedMicros);
    this.timedOut.push(attempt.timedOut);
    this.results.push(attempt.results);
    this.cache.push(attempt.cache ?? null);
    this.saved.push(attempt.savedMicros ?? 0);
    this.settledAt.push(settledAt);
    const kind = recordKind(record);
    this.kind.push(kind);
    if (kind !== 'search') this.anyOtherKind = true;
  }

  /** In the order of the INSERT's unnest, as array literals. */
  columns(): string[] {
    return [this.requestId, this.attemptIndex, this.keyId, this.model, this.provider, this.source, this.status,
      this.error, this.reserved, this.charged, this.timedOut, this.results, this.cache, this.saved, this.settledAt, this.anyOtherKind ? this.kind : []].map(pgArray);
  }
}

/**
 * The ledger-append port: the only code that writes ledger entries and moves balances
 * (docs/decisions/0038). Grants, purchases, automatic top-ups, refunds and disputes are
 * written in the caller's transaction (a service's `Transactions.run`, next to that change's
 * own rows, its event and its audit entry), always with the account's balance row locked
 * first (SELECT ... FOR UPDATE), so entries of one account are serialised: each entry's
 * balance_after is the balance after it, and balance = sum of entries. The drain's
 * settlements are written here too, in a transaction of their own on node-postgres.
 * New entries other than search charges carry applied_to_spendable_at NULL: the spendable
 * outbox applies them to Redis exactly once after the commit.
 */
export class LedgerAppendRepository {
  /** `pool`: the node-postgres pool under the Prisma client (createBillingDatabase), for the drain's batch write. */
  constructor(private readonly pool: Pool) {}

  /**
   * Locks the account's balance row in `tx` (creating it first, at zero, when `create`) and
   * answers the balance, or null when the account has none (and `create` is false).
   */
  async lockBalance(tx: Tx, accountId: string, { create }: { create: boolean }): Promise<Micros | null> {
    if (create) await tx.$executeRaw`INSERT INTO account_balances (account_id) VALUES (${accountId}) ON CONFLICT DO NOTHING`;
    const locked = await tx.$queryRaw<{ balance_micros: bigint }[]>`
      SELECT balance_micros FROM account_balances WHERE account_id = ${accountId} FOR UPDATE`;
    const row = locked[0];
    return row === undefined ? null : toMicros(row.balance_micros);
  }

  /** The entry of this kind already written under `idempotencyKey`, if any (read with the balance row locked). */
  async entryByKey(tx: Tx, accountId: string, kind: LedgerEntryKind, idempotencyKey: string): Promise<LedgerEntryRecord | null> {
    const rows = await tx.$queryRaw<EntryRow[]>`
      SELECT ${ENTRY_COLUMNS} FROM ledger_entries
      WHERE account_id = ${accountId} AND kind = CAST(${kind} AS "ledger_entry_kind") AND idempotency_key = ${idempotencyKey}`;
    const first = rows[0];
    return first === undefined ? null : entryFromRow(first);
  }

  /**
   * With the account's balance row already locked in `tx` (lockBalance): moves the balance by
   * the entry's amount and the totals as its kind says (totalsDelta), then writes the entry
   * with the balance after it. created_at is clock_timestamp(), read after the lock, so it
   * grows with each entry of an account and "newest first" is the order the balance moved in.
   */
  async writeLocked(tx: Tx, entry: EntryToWrite): Promise<LedgerEntryRecord> {
    const delta = totalsDelta(entry.kind, entry.amountMicros);
    const updated = await tx.$queryRaw<{ balance_micros: bigint }[]>`
      UPDATE account_balances SET
        balance_micros = balance_micros + ${BigInt(entry.amountMicros)},
        total_purchased_micros = total_purchased_micros + ${BigInt(delta.purchased)},
        total_granted_micros = total_granted_micros + ${BigInt(delta.granted)},
        total_spent_micros = total_spent_micros + ${BigInt(delta.spent)},
        updated_at = clock_timestamp()
      WHERE account_id = ${entry.accountId}
      RETURNING balance_micros`;
    const balanceAfter = updated[0];
    if (balanceAfter === undefined) throw new Error('locked balance row vanished');
    const inserted = await tx.$queryRaw<EntryRow[]>`
      INSERT INTO ledger_entries
        (id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key, request_id, created_at)
      VALUES (
        ${entry.id ?? newId('ledgerEntry')}, ${entry.accountId}, CAST(${entry.kind} AS "ledger_entry_kind"),
        ${BigInt(entry.amountMicros)}, ${balanceAfter.balance_micros}, ${entry.reason},
        ${entry.idempotencyKey}, ${entry.requestId}, clock_timestamp())
      RETURNING ${ENTRY_COLUMNS}`;
    const row = inserted[0];
    if (row === undefined) throw new Error('ledger insert returned no row');
    return entryFromRow(row);
  }

  /**
   * Locks the balance row and appends one entry. With an idempotency key, an entry already
   * written under it is answered (`repeated`) and nothing moves. `create`: make the balance
   * row when the account has none (a purchase, a top-up); else such an account is
   * `no_balance_row` (a grant checks first that the account exists).
   */
  async append(tx: Tx, entry: EntryToWrite, { create = false }: { create?: boolean } = {}): Promise<AppendOutcome> {
    if ((await this.lockBalance(tx, entry.accountId, { create })) === null) return { kind: 'no_balance_row' };
    if (entry.idempotencyKey !== null) {
      const existing = await this.entryByKey(tx, entry.accountId, entry.kind, entry.idempotencyKey);
      if (existing !== null) return { kind: 'repeated', entry: existing };
    }
    return { kind: 'created', entry: await this.writeLocked(tx, entry) };
  }

  /**
   * With the account's balance row locked in `tx`: a research run's settlement, exactly the
   * rows a search's settlement has (a settlements row, whose trigger adds the charge to the
   * key's spend per day, and one usage event per attempt) plus its `research_release` entry
   * (keyed by the run id, written unapplied: the outbox gives the release back to the
   * spendable balance and moves the key's counters). The caller checks, under the run's own
   * row lock, that the run was not settled before.
   */
  async writeResearchSettlement(tx: Tx, settlement: ResearchSettlement): Promise<LedgerEntryRecord> {
    const entry = await this.writeLocked(tx, {
      accountId: settlement.accountId, kind: 'research_release', amountMicros: settlement.releaseMicros, reason: null,
      idempotencyKey: settlement.runId, requestId: settlement.runId,
    });
    await tx.$executeRaw`
      INSERT INTO settlements (request_id, account_id, key_id, charged_micros, attempt_count, settled_at, request_kind)
      VALUES (${settlement.runId}, ${settlement.accountId}, ${settlement.keyId}, ${BigInt(settlement.chargedMicros)}, ${settlement.attempts.length}, ${settlement.settledAt}, 'research')`;
    for (const a of settlement.attempts) {
      await tx.$executeRaw`
        INSERT INTO usage_events (request_id, attempt_index, account_id, key_id, model, provider, source, status, error,
          reserved_micros, charged_micros, timed_out, results, cache, saved_micros, settled_at, request_kind)
        VALUES (${settlement.runId}, ${a.index}, ${settlement.accountId}, ${settlement.keyId}, ${a.model}, ${a.provider}, 'platform', ${a.status}, ${a.error},
          ${BigInt(a.reservedMicros)}, ${BigInt(a.chargedMicros)}, false, ${a.results}, NULL, 0, ${settlement.settledAt}, 'research')`;
    }
    return entry;
  }

  /**
   * Writes one batch of an account's settlement records in ONE transaction: a settlements
   * row per search (its primary key is the exactly-once gate), the usage events of the
   * searches inserted now, one search_charge entry per such search with a non-zero charge,
   * and the durable balance and total_spent. A record whose request id is already settled
   * writes nothing, so redelivery is harmless. The balance row is locked first, as
   * lockBalance does, so charges and the other entries of one account are serialised.
   *
   * The settlements insert is the only one with ON CONFLICT: usage events and search_charge
   * entries are written only for the settlements inserted by this transaction, so their own
   * unique keys ((request_id, attempt_index), and (account, kind, request id)) cannot be taken
   * already unless an invariant is broken (nothing deletes settlements). Then the transaction
   * fails and writes nothing, the drain job fails and logs it, and the records stay in the
   * stream: better than a charge dropped without a word. Without the two ON CONFLICT
   * arbitrations PostgreSQL spends about 4 µs (11%) less per search (docs/benchmarks.md).
   *
   * The ledger drain's hot path, so it runs on node-postgres directly (the pool Prisma
   * uses too), one INSERT ... SELECT FROM unnest(arrays) per table: the Prisma client's
   * per-query work and JSON row payloads cost more than the rows (docs/decisions/0005).
   */
  async writeSettlements(accountId: string, records: readonly SettlementRecord[]): Promise<SettlementBatchResult> {
    const unique = [...new Map(records.map((record) => [record.requestId, record])).values()];
    if (unique.length === 0) return { written: 0, skipped: records.length, chargedMicros: 0 };
    return inTransaction(this.pool, async (client) => {
      await client.query('INSERT INTO account_balances (account_id) VALUES ($1) ON CONFLICT DO NOTHING', [accountId]);
      const locked = await client.query<{ balance_micros: string }>('SELECT balance_micros FROM account_balances WHERE account_id = $1 FOR UPDATE', [accountId]);
      const start = locked.rows[0];
      if (start === undefined) throw new Error('balance row missing right after it was ensured');
      const settledAt = unique.map((r) => new Date(r.settledAtMs).toISOString());
      const inserted = await client.query<{ request_id: string }>(
        `INSERT INTO settlements (request_id, account_id, key_id, charged_micros, attempt_count, settled_at, filters, request_kind)
         SELECT s.request_id, $1, s.key_id, s.charged_micros, s.attempt_count, s.settled_at, s.filters::jsonb, coalesce(s.request_kind, 'search')
         FROM unnest($2::text[], $3::text[], $4::bigint[], $5::int[], $6::timestamptz[], $7::text[], $8::text[])
           AS s(request_id, key_id, charged_micros, attempt_count, settled_at, filters, request_kind)
         ON CONFLICT (request_id) DO NOTHING
         RETURNING request_id`,
        [accountId, pgArray(unique.map((r) => r.requestId)), pgArray(unique.map((r) => r.keyId)), pgArray(unique.map((r) => r.chargedMicros)),
          pgArray(unique.map((r) => r.attempts.length)), pgArray(settledAt),
          // The search's filters as JSON text (NULL without), parsed by PostgreSQL. A batch
          // without any sends an empty array: unnest pads the shorter arrays with NULLs.
          unique.some((r) => r.filters !== undefined) ? pgArray(unique.map((r) => (r.filters === undefined ? null : JSON.stringify(r.filters)))) : '{}',
          // The request's kind (docs/decisions/0058); a batch of searches only sends an empty array (NULL: search).
          unique.some((r) => r.kind !== undefined) ? pgArray(unique.map((r) => recordKind(r))) : '{}'],
      );
      const fresh = new Set(inserted.rows.map((row) => row.request_id));
      const written: SettlementRecord[] = [];
      const writtenAt: string[] = [];
      unique.forEach((r, i) => {
        if (!fresh.has(r.requestId)) return;
        written.push(r);
        writtenAt.push(settledAt[i] ?? '');
      });
      const usage = new UsageColumns();
      written.forEach((r, i) => {
        for (const a of r.attempts) usage.add(r, a, writtenAt[i] ?? '');
      });
      if (usage.size > 0) {
        await client.query(
          `INSERT INTO usage_events (request_id, attempt_index, account_id, key_id, model, provider, source, status,
             error, reserved_micros, charged_micros, timed_out, results, cache, saved_micros, settled_at, request_kind)
           SELECT u.request_id, u.attempt_index, $1, u.key_id, u.model, u.provider, u.source, u.status,
             u.error, u.reserved_micros, u.charged_micros, u.timed_out, u.results, u.cache, u.saved_micros, u.settled_at, coalesce(u.request_kind, 'search')
           FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
               $9::text[], $10::bigint[], $11::bigint[], $12::boolean[], $13::int[], $14::text[], $15::bigint[], $16::timestamptz[], $17::text[])
             AS u(request_id, attempt_index, key_id, model, provider, source, status, error, reserved_micros,
               charged_micros, timed_out, results, cache, saved_micros, settled_at, request_kind)`,
          [accountId, ...usage.columns()],
        );
      }
      let balance = toMicros(BigInt(start.balance_micros));
      const ids: string[] = [];
      const kinds: string[] = [];
      const requestIds: string[] = [];
      const amounts: number[] = [];
      const after: number[] = [];
      const caches: (string | null)[] = [];
      const requestKinds: string[] = [];
      for (const r of written) {
        if (r.chargedMicros <= 0) continue;
        // The entry records the cache status of the search's answer (null when none answered).
        let cache: string | null = null;
        for (const a of r.attempts) if (a.status === 'success') cache = a.cache ?? null;
        // A search's charge in two entries at most: what its platform attempts cost
        // (search_charge) and what its BYOK attempts cost (byok_fee), in that order.
        let byok = 0;
        for (const a of r.attempts) if (a.source === 'byok') byok += a.chargedMicros;
        const platform = r.chargedMicros - byok;
        for (const [kind, micros] of [['search_charge', platform], ['byok_fee', byok]] as const) {
          if (micros <= 0) continue;
          balance -= micros;
          ids.push(newId('ledgerEntry'));
          kinds.push(kind);
          requestIds.push(r.requestId);
          amounts.push(-micros);
          after.push(balance);
          caches.push(cache);
          requestKinds.push(recordKind(r));
        }
      }
      let charged = 0;
      if (ids.length > 0) {
        // applied_to_spendable_at is set at once: the gateway already moved the spendable
        // balance when it settled, so the outbox has nothing to apply for a charge. Rows go
        // in in order, so created_at (clock_timestamp()) follows balance_after.
        const entries = await client.query<{ amount_micros: string }>(
          `INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key,
             request_id, created_at, applied_to_spendable_at, cache, request_kind)
           SELECT c.id, $1, c.kind::"ledger_entry_kind", c.amount_micros, c.balance_after_micros, NULL, c.request_id,
             c.request_id, clock_timestamp(), clock_timestamp(), c.cache, coalesce(c.request_kind, 'search')
           FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[]) WITH ORDINALITY
             AS c(id, request_id, amount_micros, balance_after_micros, kind, cache, request_kind, ordinal)
           ORDER BY c.ordinal
           RETURNING amount_micros`,
          // The requests' kinds: a batch of searches only sends an empty array (unnest pads it with NULLs: search).
          [accountId, pgArray(ids), pgArray(requestIds), pgArray(amounts), pgArray(after), pgArray(kinds), pgArray(caches), pgArray(requestKinds.some((k) => k !== 'search') ? requestKinds : [])],
        );
        charged = -entries.rows.reduce((sum, row) => sum + toMicros(BigInt(row.amount_micros)), 0);
        await client.query(
          `UPDATE account_balances SET
             balance_micros = balance_micros - $2,
             total_spent_micros = total_spent_micros + $2,
             updated_at = clock_timestamp()
           WHERE account_id = $1`,
          [accountId, charged],
        );
      }
      return { written: written.length, skipped: records.length - written.length, chargedMicros: charged };
    });
  }
}
