import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A transaction the stores write in: a service opens it and hands it to each store it calls. */
export type Tx = Prisma.TransactionClient;

/**
 * A service's unit of work: `run` opens one transaction, gives it to `work`, and commits when
 * `work` resolves (or rolls back when it throws). Each store takes the `tx` it is given, so a
 * change, its ledger entry, its event and its audit entry commit together, while no store
 * reaches into another (docs/decisions/0038).
 */
export class Transactions {
  constructor(private readonly prisma: PrismaClient) {}

  run<T>(work: (tx: Tx) => Promise<T>, { timeoutMs = 10_000 }: { timeoutMs?: number } = {}): Promise<T> {
    return this.prisma.$transaction(work, { maxWait: 10_000, timeout: timeoutMs });
  }
}
