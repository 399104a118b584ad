import type { Micros } from '@svc/money';
import type { PrismaClient } from '../generated/prisma/client';

export interface NewCheckoutRow {
  id: string;
  accountId: string;
  stripeSessionId: string;
  amountCents: number;
  creditMicros: Micros;
  expiresAt: Date;
}

/** checkout_sessions rows written at checkout (pending). The webhook side is PurchaseRepository. */
export class CheckoutRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Records the session as pending; a row already written for it (idempotent create) is kept. */
  async insertPending(row: NewCheckoutRow): Promise<void> {
    await this.prisma.$executeRaw`
      INSERT INTO checkout_sessions (id, account_id, stripe_session_id, status, amount_cents, credit_micros, expires_at)
      VALUES (${row.id}, ${row.accountId}, ${row.stripeSessionId}, 'pending', ${row.amountCents}, ${BigInt(row.creditMicros)}, ${row.expiresAt})
      ON CONFLICT (stripe_session_id) DO NOTHING`;
  }
}
