import type { Micros } from '@svc/money';
import type { Tx } from '../db/transactions';

export interface NewCheckoutRow {
  id: string;
  accountId: string;
  stripeSessionId: string;
  amountCents: number;
  creditMicros: Micros;
  expiresAt: Date;
}

/** checkout_sessions rows written at checkout (pending). The paid side is PurchasesRepository's. */
export class CheckoutRepository {
  /** Records the session as pending; a row already written for it (idempotent create) is kept. True when the row is new. */
  async insertPending(tx: Tx, row: NewCheckoutRow): Promise<boolean> {
    const inserted = await tx.$executeRaw`
      INSERT INTO checkout_sessions (id, account_id, stripe_session_id, status, amount_cents, credit_micros, expires_at)
      VALUES (${row.id}, ${row.accountId}, ${row.stripeSessionId}, 'pending', ${row.amountCents}, ${BigInt(row.creditMicros)}, ${row.expiresAt})
      ON CONFLICT (stripe_session_id) DO NOTHING`;
    return inserted > 0;
  }
}
