import { credentials, Metadata } from '@grpc/grpc-js';
import type { SettlementRecord } from '@svc/contracts';
import { AccountAdminClient } from '@svc/grpc';
import type { Logger } from 'pino';

/** Where key uses go: account-admin's MarkKeysUsed (it owns `keys.last_used_at`). */
export interface KeyUseSink {
  markUsed(uses: readonly { keyId: string; usedAtMs: number }[]): Promise<number>;
  close(): void;
}

const CALL_TIMEOUT_MS = 5_000;
/** A key's last_used_at is written at most this often (and account-admin refuses anything closer). */
export const KEY_USE_RESOLUTION_MS = 60_000;
/** Uses sent per call. */
const BATCH = 5_000;
/** Keys remembered at most; past it, keys not seen for a minute are forgotten first. */
const MAX_KEYS = 200_000;

export class GrpcKeyUseSink implements KeyUseSink {
  private readonly client: InstanceType<typeof AccountAdminClient>;

  constructor(address: string) {
    this.client = new AccountAdminClient(address, credentials.createInsecure());
  }

  markUsed(uses: readonly { keyId: string; usedAtMs: number }[]): Promise<number> {
    return new Promise((resolve, reject) => {
      this.client.markKeysUsed({ uses: [...uses] }, new Metadata(), { deadline: Date.now() + CALL_TIMEOUT_MS }, (error, response) =>
        (error === null ? resolve(response.updated) : reject(error)));
    });
  }

  close(): void {
    this.client.close();
  }
}

/**
 * `last_used_at`, off the search's hot path: the ledger worker notes the key and settlement
 * time of every record it committed, and every `flushIntervalMs` sends account-admin the keys
 * whose newest use is at least a minute after the last one sent (or never sent). So a key is
 * written at most once a minute by each worker, and account-admin's own check (a use must be
 * a minute newer than the stored one) keeps that true across worker replicas. A failed call is
 * logged and its uses sent again with the next flush; nothing about a search waits for it.
 */
export class KeyUseRecorder {
  private readonly latest = new Map<string, { usedAtMs: number; sentAtMs: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly sink: KeyUseSink,
    private readonly log: Logger,
    private readonly flushIntervalMs: number,
  ) {}

  /** Called after a drain batch committed. */
  note(records: readonly SettlementRecord[]): void {
    for (const record of records) {
      if (record.keyId === '') continue;
      const entry = this.latest.get(record.keyId);
      if (entry === undefined) {
        if (this.latest.size >= MAX_KEYS) this.forgetQuiet();
        this.latest.set(record.keyId, { usedAtMs: record.settledAtMs, sentAtMs: 0 });
      } else if (record.settledAtMs > entry.usedAtMs) {
        entry.usedAtMs = record.settledAtMs;
      }
    }
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.flushing === null) {
        this.flushing = this.flush().finally(() => {
          this.flushing = null;
        });
      }
    }, this.flushIntervalMs);
    this.timer.unref();
  }

  /** Sends the uses that are due; resolves when done (failures are logged, kept for the next flush). */
  async flush(): Promise<void> {
    const due: { keyId: string; usedAtMs: number }[] = [];
    for (const [keyId, entry] of this.latest) {
      if (entry.sentAtMs === 0 || entry.usedAtMs - entry.sentAtMs >= KEY_USE_RESOLUTION_MS) due.push({ keyId, usedAtMs: entry.usedAtMs });
    }
    for (let at = 0; at < due.length; at += BATCH) {
      const batch = due.slice(at, at + BATCH);
      try {
        await this.sink.markUsed(batch);
      } catch (error) {
        this.log.warn({ keys: batch.length, err: error instanceof Error ? error.message : String(error) }, 'key uses not recorded in account-admin; sent again with the next flush');
        return;
      }
      for (const use of batch) {
        const entry = this.latest.get(use.keyId);
        if (entry !== undefined) entry.sentAtMs = use.usedAtMs;
      }
    }
  }

  /** Forgets keys whose newest use was sent (they are written again at most a minute after their next use). */
  private forgetQuiet(): void {
    for (const [keyId, entry] of this.latest) {
      if (entry.sentAtMs === entry.usedAtMs) this.latest.delete(keyId);
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.flushing;
    await this.flush();
    this.sink.close();
  }
}
