import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import { auditInsertSql } from './audit.repository';
import type { AuditActor } from './audit.repository';
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

  /**
   * Records the session as pending; a row already written for it (idempotent create) is kept.
   * With `audit`, the purchase started is appended to the audit log in the same transaction,
   * only when the row is new.
   */
  async insertPending(row: NewCheckoutRow, audit?: AuditActor): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const inserted = await tx.$executeRaw`
        INSERT INTO checkout_sessions (id, account_id, stripe_session_id, status, amount_cents, credit_micros, expires_at)
        VALUES (${row.id}, ${row.accountId}, ${row.stripeSessionId}, 'pending', ${row.amountCents}, ${BigInt(row.creditMicros)}, ${row.expiresAt})
        ON CONFLICT (stripe_session_id) DO NOTHING`;
      if (inserted === 0 || audit === undefined) return;
      const changes = {
        amount_usd: { before: null, after: row.amountCents / 100 },
        credit_usd: { before: null, after: microsToUsd(row.creditMicros) },
        status: { before: null, after: 'pending' },
      };
      await tx.$executeRaw(auditInsertSql({ accountId: row.accountId, actor: audit, action: 'purchase.start', targetId: row.id, changes }));
    });
  }
}
