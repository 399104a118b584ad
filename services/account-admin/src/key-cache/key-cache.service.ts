import { Inject, Injectable } from '@nestjs/common';
import type { OnModuleDestroy } from '@nestjs/common';
import type { KeyRecord } from '@svc/contracts';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { KeyCacheRepository } from './key-cache.repository';

/** Delays of the background retries after a failed write (the first try is inline). */
export const RETRY_DELAYS_MS = [500, 2_000, 8_000] as const;

/**
 * Makes a committed key change visible: the versioned record in Redis, then a message on
 * the key-change channel. A failure never fails the caller's request (the change is already
 * committed); it is logged and retried in the background a few times. If every retry fails,
 * Redis keeps the previous record until the next change or LookupKey of that hash (see
 * docs: the gap is bounded only by Redis coming back and the key being touched again).
 */
@Injectable()
export class KeyCacheService implements OnModuleDestroy {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    @Inject(KeyCacheRepository) private readonly cache: KeyCacheRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Writes and publishes; resolves true when done now, false when left to retries. */
  async propagate(keyHash: string, record: KeyRecord): Promise<boolean> {
    try {
      await this.writeAndPublish(keyHash, record);
      return true;
    } catch (error) {
      this.logger.error({ key_id: record.id, version: record.version, err: describe(error) }, 'key cache write failed; retrying in background');
      this.scheduleRetry(keyHash, record, 0);
      return false;
    }
  }

  /** The LookupKey fill: the record from Postgres, version-checked, without a message. */
  async fill(keyHash: string, record: KeyRecord): Promise<void> {
    await this.cache.writeRecord(keyHash, record);
  }

  async fillMiss(keyHash: string, ttlSeconds: number): Promise<void> {
    await this.cache.writeMiss(keyHash, ttlSeconds);
  }

  private async writeAndPublish(keyHash: string, record: KeyRecord): Promise<void> {
    await this.cache.writeRecord(keyHash, record);
    await this.cache.publishChange({ v: 1, keyHash, keyId: record.id, accountId: record.accountId, version: record.version });
  }

  private scheduleRetry(keyHash: string, record: KeyRecord, attempt: number): void {
    const delay = RETRY_DELAYS_MS[attempt];
    if (delay === undefined) {
      this.logger.error({ key_id: record.id, version: record.version }, 'key cache write gave up; Redis may hold an older record');
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.writeAndPublish(keyHash, record).then(
        () => this.logger.info({ key_id: record.id, version: record.version, attempt: attempt + 1 }, 'key cache write succeeded on retry'),
        (error: unknown) => {
          this.logger.warn({ key_id: record.id, attempt: attempt + 1, err: describe(error) }, 'key cache retry failed');
          this.scheduleRetry(keyHash, record, attempt + 1);
        },
      );
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  onModuleDestroy(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
