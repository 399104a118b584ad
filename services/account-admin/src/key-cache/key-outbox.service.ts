import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { toKeyRecord } from './key-record';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { KeyCacheService } from './key-cache.service';
import { KeyOutboxRepository } from './key-outbox.repository';
import type { PendingKey } from './key-outbox.repository';
import { describeError } from '@svc/errors';
import { PeriodicLoop } from '../periodic/periodic-loop';

/** Outbox rows claimed per transaction. */
export const OUTBOX_BATCH_SIZE = 100;

/**
 * The outbox loop: on start and then every KEY_OUTBOX_INTERVAL_MS, writes the current
 * record of every key with an outbox row to Redis (version-checked), publishes the change
 * and deletes the rows. It never gives up: a row stays until Redis has taken its key's
 * record. Replicas run it side by side safely: each row is claimed by one transaction
 * (SKIP LOCKED), and a record written twice is written idempotently (same version).
 */
@Injectable()
export class KeyOutboxService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly loop: PeriodicLoop;

  constructor(
    @Inject(KeyOutboxRepository) private readonly outbox: KeyOutboxRepository,
    @Inject(KeyCacheService) private readonly cache: KeyCacheService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.loop = new PeriodicLoop(
      async () => {
        const written = await this.drain();
        if (written > 0) this.logger.info({ written }, 'outbox: key records written to Redis');
      },
      config.KEY_OUTBOX_INTERVAL_MS,
      (error) => this.logger.error({ err: describeError(error) }, 'outbox pass failed; will retry'),
    );
  }

  /** Starts the loop with an immediate pass, so rows left by a crash are flushed on start. */
  onApplicationBootstrap(): void {
    this.loop.start();
  }

  /**
   * Passes until the outbox is empty or a write fails; resolves with the number of records
   * written to Redis. Throws only when Postgres fails (the loop logs it and tries again).
   */
  async drain(): Promise<number> {
    let written = 0;
    for (;;) {
      const pass = { failed: false };
      const claimed = await this.outbox.processBatch(OUTBOX_BATCH_SIZE, async (keys) => {
        const done = await this.writeAll(keys);
        written += keys.filter((key) => key.row !== null && done.has(key.keyHash)).length;
        pass.failed = done.size < keys.length;
        return done;
      });
      if (pass.failed || claimed < OUTBOX_BATCH_SIZE || this.loop.stopped) return written;
    }
  }

  /** Writes in order and stops at the first failure (Redis is then most likely down). */
  private async writeAll(keys: readonly PendingKey[]): Promise<Set<string>> {
    const done = new Set<string>();
    for (const key of keys) {
      if (key.row === null) {
        this.logger.error({ key_hash: key.keyHash }, 'outbox row names no key; dropped');
        done.add(key.keyHash);
        continue;
      }
      const record = toKeyRecord(key.row);
      try {
        await this.cache.writeAndPublish(key.keyHash, record, key.readAtMs);
        done.add(key.keyHash);
      } catch (error) {
        this.logger.warn({ key_id: record.id, version: record.version, err: describeError(error) }, 'outbox: key cache write failed; will retry');
        break;
      }
    }
    return done;
  }

  /** Stops the loop and waits for a pass in progress (its rows stay if it is cut short). */
  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
