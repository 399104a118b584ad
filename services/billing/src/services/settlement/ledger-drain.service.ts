import type { SettlementRecord } from '@svc/contracts';
import type { Logger } from 'pino';
import { settlementSpans } from './settlement-spans';
import type { LedgerAppendRepository } from '../../stores/ledger-append.repository';
import { parseSettlement, requestIdOfEntry } from './settlement-record';
import { DEFAULT_SWEEP_SCAN_KEYS } from './settlement-stream.adapter';
import type { RemovedEntry, SettlementStreamAdapter, StreamEntry } from './settlement-stream.adapter';

export interface DrainOptions {
  /** Stream entries read and written per Postgres transaction. */
  batchSize: number;
  /** Accounts taken from the dirty set at a time. */
  accountsPerPop?: number;
  /** Keys a sweep's SCAN walks at most (LEDGER_SWEEP_SCAN_KEYS); the next sweep goes on from there. */
  sweepScanKeys?: number;
  /** Batches of one account per pass before it goes back to the dirty set (fairness). */
  maxBatchesPerAccount?: number;
  /** Told every batch of records after it committed (the key-use recorder: last_used_at). */
  onCommitted?: (records: readonly SettlementRecord[]) => void;
  /** Told of every committed batch and every dead-lettered entry (the worker's metrics). */
  observer?: DrainObserver;
}

export interface DrainObserver {
  batchWritten(records: readonly SettlementRecord[], written: number, skipped: number, chargedMicros: number, nowMs: number): void;
  deadLetter(): void;
}

export interface DrainResult {
  accounts: number;
  written: number;
  skipped: number;
  deadLettered: number;
}

/**
 * Moves settlement records from the accounts' Redis streams into Postgres.
 *
 * drain(): take accounts off the dirty set (the mark goes BEFORE the stream is read, so a
 * record the gateway adds meanwhile marks the account again), read each stream oldest first
 * in batches, write a batch in one transaction (idempotent on the request id), and only
 * after the commit delete the written entries. On any failure the popped accounts go back
 * to the dirty set and the error propagates (the BullMQ job fails and is retried); nothing
 * was removed from a stream that was not committed.
 *
 * sweep(): the backstop for a lost dirty mark (a gateway that died between its two
 * commands, a worker killed after SPOP): every stream with entries is marked dirty.
 */
export class LedgerDrainService {
  private readonly accountsPerPop: number;
  private readonly maxBatchesPerAccount: number;

  constructor(
    private readonly streams: SettlementStreamAdapter,
    private readonly repository: LedgerAppendRepository,
    private readonly logger: Logger,
    private readonly options: DrainOptions,
  ) {
    this.accountsPerPop = options.accountsPerPop ?? 100;
    this.maxBatchesPerAccount = options.maxBatchesPerAccount ?? 20;
  }

  async drain(): Promise<DrainResult> {
    const total: DrainResult = { accounts: 0, written: 0, skipped: 0, deadLettered: 0 };
    for (;;) {
      const accounts = await this.streams.popDirty(this.accountsPerPop);
      if (accounts.length === 0) return total;
      for (const [position, accountId] of accounts.entries()) {
        try {
          const result = await this.drainAccount(accountId);
          total.accounts += 1;
          total.written += result.written;
          total.skipped += result.skipped;
          total.deadLettered += result.deadLettered;
        } catch (error) {
          // Put back this account and every one popped but not reached; best effort: the
          // sweep re-marks them anyway if Redis is the part that failed.
          await this.streams.markDirty(accounts.slice(position)).catch(() => undefined);
          throw error;
        }
      }
      if (accounts.length < this.accountsPerPop) return total;
    }
  }

  /** Drains one account's stream; leaves it marked dirty if it stopped with entries left. */
  async drainAccount(accountId: string): Promise<Omit<DrainResult, 'accounts'>> {
    const result = { written: 0, skipped: 0, deadLettered: 0 };
    for (let batch = 0; batch < this.maxBatchesPerAccount; batch += 1) {
      const entries = await this.streams.read(accountId, this.options.batchSize);
      if (entries.length === 0) {
        await this.streams.deleteIfEmpty(accountId);
        return result;
      }
      const records: SettlementRecord[] = [];
      const refused: { entry: StreamEntry; reason: string }[] = [];
      const removed: RemovedEntry[] = [];
      for (const entry of entries) {
        const parsed = parseSettlement(entry.record, accountId);
        if (parsed.ok) {
          if (parsed.dropped !== undefined) this.logger.warn({ account_id: accountId, entry_id: entry.id, request_id: parsed.record.requestId, reason: parsed.dropped }, 'settlement entry written in part');
          records.push(parsed.record);
          removed.push({ id: entry.id, requestId: parsed.record.requestId });
        } else {
          refused.push({ entry, reason: parsed.reason });
          removed.push({ id: entry.id, requestId: requestIdOfEntry(entry.record) });
        }
      }
      // A traced search's write joins its trace: one span per record, ended at the commit.
      const spans = settlementSpans(records);
      const written = await this.repository.writeSettlements(accountId, records);
      spans.end();
      this.options.onCommitted?.(records);
      // Committed: only now may the entries leave the stream.
      for (const { entry, reason } of refused) {
        this.logger.error({ account_id: accountId, entry_id: entry.id, reason }, 'settlement entry cannot be billed; moved to the dead-letter stream');
        await this.streams.deadLetter(accountId, entry, reason);
        result.deadLettered += 1;
        this.options.observer?.deadLetter();
      }
      await this.streams.remove(accountId, removed);
      this.options.observer?.batchWritten(records, written.written, written.skipped, written.chargedMicros, Date.now());
      result.written += written.written;
      result.skipped += written.skipped;
      this.logger.debug({ account_id: accountId, written: written.written, skipped: written.skipped, charged_micros: written.chargedMicros }, 'settlement batch written');
      if (entries.length < this.options.batchSize) {
        await this.streams.deleteIfEmpty(accountId);
        return result;
      }
    }
    await this.streams.markDirty([accountId]);
    return result;
  }

  /**
   * Marks every account whose stream has entries that a drain may not reach: the streams left
   * being drained, and those whose dirty mark was lost, found by a SCAN bounded per sweep
   * (`sweepScanKeys`; decision 0036). Returns how many.
   */
  async sweep(): Promise<number> {
    const { accounts } = await this.streams.sweepStep(this.options.sweepScanKeys ?? DEFAULT_SWEEP_SCAN_KEYS);
    await this.streams.markDirty(accounts);
    if (accounts.length > 0) this.logger.info({ accounts: accounts.length }, 'sweep marked settlement streams dirty');
    return accounts.length;
  }
}
