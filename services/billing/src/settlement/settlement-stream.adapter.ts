import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD } from '@svc/contracts';
import { scanKeys } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';

/** Where entries that cannot be billed go (kept for an operator, never silently dropped). */
export const SETTLEMENT_DEAD_LETTER_STREAM = 'svc:settle:dead';

/** An entry the drain is done with (written, skipped or dead-lettered), and the request it settled when known. */
export interface RemovedEntry {
  id: string;
  requestId: string | null;
}

export interface StreamEntry {
  id: string;
  /** The JSON SettlementRecord, undefined when the entry has no such field. */
  record: string | undefined;
}

const STREAM_PREFIX = redisKeys.settlementStream('\u0000').split('\u0000')[0] ?? '';
const STREAM_SUFFIX = redisKeys.settlementStream('\u0000').split('\u0000')[1] ?? '';

/** Deletes the stream only if it is empty, atomically (a record added meanwhile stays). */
const DELETE_IF_EMPTY = `
if redis.call('XLEN', KEYS[1]) == 0 then
  return redis.call('DEL', KEYS[1])
end
return 0`;

function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === name) return fields[i + 1];
  }
  return undefined;
}

/** The smallest stream id above `id` (`<ms>-<seq>`). */
export function nextStreamId(id: string): string {
  const dash = id.indexOf('-');
  if (dash <= 0) throw new Error(`not a stream id: ${id}`);
  return `${id.slice(0, dash)}-${(BigInt(id.slice(dash + 1)) + 1n).toString()}`;
}

/** The accounts' settlement streams and the dirty set, as the gateway writes them. */
export class SettlementStreamAdapter {
  constructor(private readonly redis: RedisClient) {}

  /** Removes up to `count` accounts from the dirty set and returns them. */
  async popDirty(count: number): Promise<string[]> {
    return this.redis.spop(SETTLEMENT_DIRTY_SET, count);
  }

  async markDirty(accountIds: readonly string[]): Promise<void> {
    if (accountIds.length === 0) return;
    await this.redis.sadd(SETTLEMENT_DIRTY_SET, ...accountIds);
  }

  /** The oldest `count` entries of the account's stream. */
  async read(accountId: string, count: number): Promise<StreamEntry[]> {
    const raw = await this.redis.xrange(redisKeys.settlementStream(accountId), '-', '+', 'COUNT', count);
    return raw.map(([id, fields]) => ({ id, record: fieldValue(fields, SETTLEMENT_FIELD) }));
  }

  /**
   * Removes the entries the drain is done with. They are always the oldest entries of the
   * stream (read from its start, in order), and ids only grow, so every entry up to the last
   * of them goes: one XTRIM MINID instead of an XDEL naming each id.
   */
  async remove(accountId: string, removed: readonly RemovedEntry[]): Promise<void> {
    const last = removed.at(-1);
    if (last === undefined) return;
    await this.redis.xtrim(redisKeys.settlementStream(accountId), 'MINID', nextStreamId(last.id));
  }

  async deleteIfEmpty(accountId: string): Promise<void> {
    await this.redis.eval(DELETE_IF_EMPTY, 1, redisKeys.settlementStream(accountId));
  }

  /** Copies an entry that cannot be billed to the dead-letter stream (then the caller removes it). */
  async deadLetter(accountId: string, entry: StreamEntry, reason: string): Promise<void> {
    await this.redis.xadd(
      SETTLEMENT_DEAD_LETTER_STREAM, 'MAXLEN', '~', '100000', '*',
      'account', accountId, 'entry', entry.id, 'reason', reason, SETTLEMENT_FIELD, entry.record ?? '',
    );
  }

  /** Every account whose settlement stream has entries (SCAN on every master: never blocks Redis). */
  async accountsWithEntries(): Promise<string[]> {
    const found = new Set<string>();
    for await (const keys of scanKeys(this.redis, redisKeys.settlementStream('*'), 'stream')) {
      for (const key of keys) {
        if (!key.startsWith(STREAM_PREFIX) || !key.endsWith(STREAM_SUFFIX)) continue;
        const accountId = key.slice(STREAM_PREFIX.length, key.length - STREAM_SUFFIX.length);
        if (accountId !== '' && !found.has(accountId) && (await this.redis.xlen(key)) > 0) found.add(accountId);
      }
    }
    return [...found];
  }
}
