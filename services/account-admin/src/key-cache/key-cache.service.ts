import { Inject, Injectable } from '@nestjs/common';
import type { KeyRecord } from '@svc/contracts';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { KeyCacheRepository } from './key-cache.repository';
import { KeyOutboxRepository } from './key-outbox.repository';
import { describeError } from '@svc/errors';

/** A committed key change to make visible: its record and the outbox row of its transaction. */
export interface CommittedChange {
  keyHash: string;
  record: KeyRecord;
  outboxId: bigint;
  /** This service's clock taken before the change's transaction began: the record's `writtenAtMs`. */
  asOfMs: number;
}

/**
 * Makes a committed key change visible: the versioned record in Redis, then a message on
 * the key-change channel, then the change's outbox row is deleted. A failure never fails the
 * caller's request (the change is already committed): the outbox row stays and the outbox
 * loop (KeyOutboxService) writes the key's current record until Redis takes it.
 */
@Injectable()
export class KeyCacheService {
  constructor(
    @Inject(KeyCacheRepository) private readonly cache: KeyCacheRepository,
    @Inject(KeyOutboxRepository) private readonly outbox: KeyOutboxRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Writes, publishes and clears the outbox row; resolves true when done now, false when left to the loop. */
  async propagate(change: CommittedChange): Promise<boolean> {
    const { keyHash, record } = change;
    try {
      await this.writeAndPublish(keyHash, record, change.asOfMs);
    } catch (error) {
      this.logger.warn({ key_id: record.id, version: record.version, err: describeError(error) }, 'key cache write failed; left to the outbox loop');
      return false;
    }
    try {
      await this.outbox.removeUnlessClaimed(change.outboxId);
    } catch (error) {
      // The loop will write the same (or a newer) record again and delete the row.
      this.logger.warn({ key_id: record.id, err: describeError(error) }, 'outbox row not removed; the loop will rewrite the record');
    }
    return true;
  }

  /** The versioned write, then the change message; throws when Redis refuses either. */
  async writeAndPublish(keyHash: string, record: KeyRecord, writtenAtMs: number): Promise<void> {
    await this.cache.writeRecord(keyHash, record, writtenAtMs);
    await this.cache.publishChange({ v: 1, keyHash, keyId: record.id, accountId: record.accountId, version: record.version });
  }

  /** The LookupKey fill: the record from Postgres, version-checked, without a message. */
  async fill(keyHash: string, record: KeyRecord, writtenAtMs: number): Promise<void> {
    await this.cache.writeRecord(keyHash, record, writtenAtMs);
  }

  async fillMiss(keyHash: string, ttlSeconds: number, writtenAtMs: number): Promise<void> {
    await this.cache.writeMiss(keyHash, ttlSeconds, writtenAtMs);
  }
}
