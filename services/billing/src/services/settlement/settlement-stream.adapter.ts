import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD, SETTLEMENT_STREAMS_SET } from '@svc/contracts';
import { KeyspaceWalk, pipelineEach } from '@svc/redis-client';
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

/** Deletes the stream only if it is empty, atomically (a record added meanwhile stays). 1: no stream is left; 0: it has entries. */
const DELETE_IF_EMPTY = `
if redis.call('XLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

/**
 * Pops up to ARGV[1] accounts from the dirty set (KEYS[1]) and adds them to the set of streams
 * being drained (KEYS[2], the same hash slot), in one step: an account taken from the dirty
 * set is never in neither (decision 0036).
 */
const POP_DIRTY = `
local popped = redis.call('SPOP', KEYS[1], ARGV[1])
for i = 1, #popped, 1000 do
  redis.call('SADD', KEYS[2], unpack(popped, i, math.min(i + 999, #popped)))
end
return popped`;

/** Keys a sweep's SCAN walks at most: LEDGER_SWEEP_SCAN_KEYS's default. */
export const DEFAULT_SWEEP_SCAN_KEYS = 100_000;

/** What one sweep found: accounts whose stream has entries, and whether its walk over the keyspace finished a pass. */
export interface SweepFound {
  readonly accounts: string[];
  readonly passDone: boolean;
}

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

/**
 * Every account whose stream the backlog counts, without a SCAN: the dirty set and the streams
 * being drained. A stream whose dirty mark was lost joins them when a sweep finds it (decision 0036).
 */
export async function knownStreamAccounts(redis: RedisClient): Promise<string[]> {
  const [dirty, draining] = await Promise.all([redis.smembers(SETTLEMENT_DIRTY_SET), redis.smembers(SETTLEMENT_STREAMS_SET)]);
  return [...new Set([...dirty, ...draining])];
}

/** The accounts' settlement streams and the dirty set, as the gateway writes them. */
export class SettlementStreamAdapter {
  /** The sweep's SCAN for streams whose dirty mark was lost, resumed at each sweep (decision 0036). */
  private readonly walk: KeyspaceWalk;

  constructor(private readonly redis: RedisClient) {
    this.walk = new KeyspaceWalk(redis, redisKeys.settlementStream('*'), 'stream');
  }

  /** Removes up to `count` accounts from the dirty set, adds them to the streams being drained, and returns them. */
  async popDirty(count: number): Promise<string[]> {
    return (await this.redis.eval(POP_DIRTY, 2, SETTLEMENT_DIRTY_SET, SETTLEMENT_STREAMS_SET, count)) as string[];
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

  /** Deletes the account's stream if it is empty; then it is no longer being drained. */
  async deleteIfEmpty(accountId: string): Promise<void> {
    const gone = await this.redis.eval(DELETE_IF_EMPTY, 1, redisKeys.settlementStream(accountId));
    // A record written after the delete comes with its own dirty mark.
    if (gone === 1) await this.redis.srem(SETTLEMENT_STREAMS_SET, accountId);
  }

  /** Copies an entry that cannot be billed to the dead-letter stream (then the caller removes it). */
  async deadLetter(accountId: string, entry: StreamEntry, reason: string): Promise<void> {
    await this.redis.xadd(
      SETTLEMENT_DEAD_LETTER_STREAM, 'MAXLEN', '~', '100000', '*',
      'account', accountId, 'entry', entry.id, 'reason', reason, SETTLEMENT_FIELD, entry.record ?? '',
    );
  }

  /**
   * The accounts whose stream has entries that a drain may not reach (decision 0036):
   * - the streams being drained: a worker that stopped after popping an account leaves it
   *   there (one found empty leaves the set);
   * - streams whose dirty mark was lost (a gateway stopped between its settlement and its
   *   mark), found by a SCAN that walks about `scanKeys` keys and goes on from there at the
   *   next sweep, so its cost does not grow with the keyspace (the result cache's entries can
   *   be millions).
   */
  async sweepStep(scanKeys: number): Promise<SweepFound> {
    const draining = await this.redis.smembers(SETTLEMENT_STREAMS_SET);
    const step = await this.walk.step(scanKeys);
    const scanned: string[] = [];
    for (const key of step.keys) {
      if (!key.startsWith(STREAM_PREFIX) || !key.endsWith(STREAM_SUFFIX)) continue;
      const accountId = key.slice(STREAM_PREFIX.length, key.length - STREAM_SUFFIX.length);
      if (accountId !== '') scanned.push(accountId);
    }
    // The streams being drained come first (SMEMBERS has no repeats), then those scanned.
    const candidates = [...new Set([...draining, ...scanned])];
    const lengths = await this.lengths(candidates);
    const accounts = candidates.filter((_, i) => (lengths[i] ?? 0) > 0);
    const empty = draining.filter((_, i) => lengths[i] === 0);
    // An empty one leaves the set; a record written meanwhile comes with its own dirty mark.
    if (empty.length > 0) await this.redis.srem(SETTLEMENT_STREAMS_SET, ...empty);
    return { accounts, passDone: step.passDone };
  }

  /** XLEN of each account's stream, in order (0 for a missing stream or a key of another type). */
  private async lengths(accountIds: readonly string[]): Promise<number[]> {
    const replies = await pipelineEach(this.redis, accountIds, (accountId) => redisKeys.settlementStream(accountId), (pipeline, accountId) => {
      pipeline.xlen(redisKeys.settlementStream(accountId));
    });
    return replies.map((reply) => {
      const [error, length] = reply[0] ?? [null, 0];
      return error === null ? Number(length) : 0;
    });
  }
}
