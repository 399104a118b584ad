import { Inject, Injectable } from '@nestjs/common';
import { DatabaseRepository } from '../db/database.repository';
import { toRow } from '../db/key-row';
import type { KeyRow } from '../db/key-row';

/** A key with committed changes not yet confirmed in Redis, as it stands in Postgres now. */
export interface PendingKey {
  keyHash: string;
  /** The key's current row; null only if the row is gone (keys are never hard-deleted). */
  row: KeyRow | null;
  /** This service's clock just before the row was read: the record's `writtenAtMs`. */
  readAtMs: number;
}

/**
 * Writes the pending keys to Redis; resolves with the hashes that are now in Redis and
 * published (their outbox rows are deleted), the rest stay for the next pass.
 */
export type PendingKeyHandler = (keys: readonly PendingKey[]) => Promise<ReadonlySet<string>>;

/**
 * Longest a claiming transaction may stay open. A batch stops at its first Redis failure,
 * so this only bites when Redis answers very slowly; a rolled-back batch is redone later
 * (writes are version-checked, so doing one twice is harmless).
 */
const CLAIM_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * The key_cache_outbox table: one row per committed key change (inserted by KeysRepository
 * in the change's transaction), deleted once the key's record is in Redis.
 */
@Injectable()
export class KeyOutboxRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /**
   * Claims up to `limit` of the oldest rows that no other replica holds (FOR UPDATE SKIP
   * LOCKED), reads the current row of each key they name, hands those to `handle`, and
   * deletes the claimed rows of the hashes it reports done, all in one transaction. Rows of
   * the same key committed meanwhile are not claimed and stay for the next pass. Resolves
   * with the number of rows claimed.
   */
  async processBatch(limit: number, handle: PendingKeyHandler): Promise<number> {
    return this.db.client.$transaction(
      async (tx) => {
        const claimed = await tx.$queryRaw<{ id: bigint; key_hash: string }[]>`
          SELECT id, key_hash FROM key_cache_outbox ORDER BY id LIMIT CAST(${limit} AS integer) FOR UPDATE SKIP LOCKED`;
        if (claimed.length === 0) return 0;
        const hashes = [...new Set(claimed.map((c) => c.key_hash))];
        const readAtMs = Date.now();
        const models = await tx.key.findMany({ where: { keyHash: { in: hashes } } });
        const rows = new Map(models.map((model) => [model.keyHash, toRow(model)]));
        const done = await handle(hashes.map((keyHash) => ({ keyHash, row: rows.get(keyHash) ?? null, readAtMs })));
        const doneIds = claimed.filter((c) => done.has(c.key_hash)).map((c) => c.id);
        if (doneIds.length > 0) await tx.keyCacheOutbox.deleteMany({ where: { id: { in: doneIds } } });
        return claimed.length;
      },
      { maxWait: 10_000, timeout: CLAIM_TRANSACTION_TIMEOUT_MS },
    );
  }

  /**
   * Deletes one row after its change reached Redis inline, unless the loop holds it right
   * now (then the loop rewrites the same record and deletes it: harmless). Never waits on a lock.
   */
  async removeUnlessClaimed(id: bigint): Promise<void> {
    await this.db.client.$executeRaw`
      DELETE FROM key_cache_outbox WHERE id = (SELECT id FROM key_cache_outbox WHERE id = ${id} FOR UPDATE SKIP LOCKED)`;
  }
}
