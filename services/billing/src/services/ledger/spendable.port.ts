import type { Micros } from '@svc/money';
import type { LedgerEntryRecord } from '../../stores/ledger.repository';

/**
 * What the ledger needs from the spendable balance in Redis. services/spendable implements both
 * (SpendableOutboxService, SpendableBalanceAdapter) and imports the ledger; the ledger (and
 * the Stripe webhook) see only these interfaces, so the dependency goes one way.
 */
export interface SpendableOutbox {
  /**
   * Called right after an entry's commit: applies it to the spendable balance exactly once.
   * A Redis failure is logged and left to the worker's sweep; it never fails the caller.
   */
  applyAfterCommit(entry: LedgerEntryRecord): Promise<void>;
}

export interface SpendableView {
  /** Spendable balance in Redis, null when the key does not exist. */
  balanceMicros: Micros | null;
  /** Held by open reservations, 0 when the gateway keeps no such key. */
  reservedMicros: Micros;
}

export interface SpendableReader {
  read(accountId: string): Promise<SpendableView>;
}
