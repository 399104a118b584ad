import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import type { AccountDirectory } from '../../adapters/account-directory.adapter';
import type { Transactions } from '../../db/transactions';
import type { AuditActor, AuditRepository } from '../../stores/audit.repository';
import type { AppendOutcome, LedgerAppendRepository } from '../../stores/ledger-append.repository';
import type { BalanceRecord, LedgerEntryRecord, LedgerRepository } from '../../stores/ledger.repository';
import type { SpendableOutbox, SpendableReader } from './spendable.port';

export interface GrantInput {
  accountId: string;
  amountMicros: Micros;
  reason: string;
  idempotencyKey: string | null;
  requestId: string;
  /** The operator who grants (the audit log's actor). */
  audit?: AuditActor;
}

export interface LedgerPageResult {
  entries: LedgerEntryRecord[];
  /** Id of the last entry when more follow, else null. */
  nextAfterId: string | null;
}

/**
 * GET /v1/credits, in micro-USD:
 * - balance: the spendable balance in Redis (redisKeys.accountBalance) when that key exists:
 *   what the account can spend now, i.e. the durable balance less open reservations and
 *   charges the ledger worker has not written yet. Without the key (Redis not yet filled
 *   for the account, or unreachable) the durable balance from Postgres.
 * - reserved: redisKeys.accountReserved when the gateway keeps it, else 0 (not part of balance).
 * - totalPurchased, totalSpent: Postgres (account_balances); total spent therefore lags the
 *   spendable balance by the settlements still in the account's stream.
 */
export interface CreditsRecord {
  balanceMicros: Micros;
  reservedMicros: Micros;
  totalPurchasedMicros: Micros;
  totalSpentMicros: Micros;
}

const ZERO_BALANCE = { balanceMicros: 0, totalPurchasedMicros: 0, totalGrantedMicros: 0, totalSpentMicros: 0 };

export interface LedgerStores {
  transactions: Transactions;
  ledger: LedgerRepository;
  /** The ledger-append port: the one writer of entries. */
  append: LedgerAppendRepository;
  audit: AuditRepository;
}

/** The rules of the ledger: accounts get a balance row, grants move it exactly once. */
export class LedgerService {
  private readonly repository: LedgerRepository;

  constructor(
    private readonly stores: LedgerStores,
    private readonly accounts: AccountDirectory,
    private readonly outbox: SpendableOutbox,
    private readonly spendable: SpendableReader,
  ) {
    this.repository = stores.ledger;
  }

  /** Creates the account in account-admin, then its zero balance row here. */
  async createAccount(input: { email?: string; name?: string }): Promise<{ accountId: string }> {
    const created = await this.accounts.createAccount(input);
    await this.repository.ensureBalance(created.accountId);
    return created;
  }

  /**
   * Grants credit. An account made elsewhere (dashboard signup) gets its balance row on
   * its first grant, once account-admin confirms it exists. A repeat under the same
   * idempotency key returns the first entry; with a different amount or reason it is
   * rejected rather than silently answered with the first grant.
   */
  async grant(input: GrantInput): Promise<LedgerEntryRecord> {
    let outcome = await this.appendGrant(input);
    if (outcome.kind === 'no_balance_row') {
      await this.requireAccount(input.accountId);
      await this.repository.ensureBalance(input.accountId);
      outcome = await this.appendGrant(input);
    }
    switch (outcome.kind) {
      case 'created':
        // Committed: now (and, if this fails or the process dies, by the worker's sweep)
        // the amount reaches the spendable balance, exactly once.
        await this.outbox.applyAfterCommit(outcome.entry);
        return outcome.entry;
      case 'repeated':
        if (outcome.entry.amountMicros !== input.amountMicros || outcome.entry.reason !== input.reason) {
          throw new AppError('invalid_request', 'Idempotency-Key was already used for a grant with a different amount_usd or reason');
        }
        await this.outbox.applyAfterCommit(outcome.entry);
        return outcome.entry;
      case 'no_balance_row':
        throw new Error('balance row missing right after it was ensured');
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  }

  /** One grant's entry and, when it is new and an operator made it, its audit entry: one transaction. */
  private appendGrant(input: GrantInput): Promise<AppendOutcome> {
    const { transactions, append, audit } = this.stores;
    return transactions.run(async (tx) => {
      const outcome = await append.append(tx, {
        accountId: input.accountId, kind: 'grant', amountMicros: input.amountMicros, reason: input.reason, idempotencyKey: input.idempotencyKey, requestId: input.requestId,
      });
      if (outcome.kind === 'created' && input.audit !== undefined) {
        await audit.append(tx, {
          accountId: input.accountId, actor: input.audit, action: 'credits.grant', targetId: outcome.entry.id,
          changes: { amount_usd: { before: null, after: microsToUsd(input.amountMicros) }, reason: { before: null, after: input.reason } },
        });
      }
      return outcome;
    });
  }

  /** Entries newest first. `afterId` comes from a cursor and must be an entry of this account. */
  async listLedger(accountId: string, limit: number, afterId: string | null): Promise<LedgerPageResult> {
    const balance = await this.repository.findBalance(accountId);
    if (balance === null) {
      await this.requireAccount(accountId);
      if (afterId !== null) throw new AppError('invalid_request', 'cursor is not valid for this list');
      return { entries: [], nextAfterId: null };
    }
    if (afterId !== null && !(await this.repository.hasEntry(accountId, afterId))) {
      throw new AppError('invalid_request', 'cursor is not valid for this list');
    }
    const page = await this.repository.listEntries(accountId, limit, afterId);
    const last = page.entries[page.entries.length - 1];
    return { entries: page.entries, nextAfterId: page.hasMore && last !== undefined ? last.id : null };
  }

  /** The durable balance; an account with no balance row has zeros. */
  async balanceOf(accountId: string): Promise<Omit<BalanceRecord, 'accountId'>> {
    const balance = await this.repository.findBalance(accountId);
    return balance ?? ZERO_BALANCE;
  }

  /** The figures of GET /v1/credits (definition on CreditsRecord). */
  async creditsOf(accountId: string): Promise<CreditsRecord> {
    const durable = await this.balanceOf(accountId);
    const live = await this.spendable.read(accountId).catch(() => null);
    return {
      balanceMicros: live?.balanceMicros ?? durable.balanceMicros,
      reservedMicros: live?.reservedMicros ?? 0,
      totalPurchasedMicros: durable.totalPurchasedMicros,
      totalSpentMicros: durable.totalSpentMicros,
    };
  }

  private async requireAccount(accountId: string): Promise<void> {
    if (!isId('account', accountId) || !(await this.accounts.accountExists(accountId))) {
      throw new AppError('not_found', `account ${accountId} does not exist`);
    }
  }
}
