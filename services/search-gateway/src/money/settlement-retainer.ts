import { randomBytes } from 'node:crypto';
import { ENSURE_EPOCH_LUA, recoveryKeys, redisKeys, SETTLE_CONFIRM_BUCKET_MS, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD, ShardEpochs } from '@svc/contracts';
import type { SettlementRecord } from '@svc/contracts';
import { pipelineEach, shardKeys } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import type { Logger } from 'pino';
import { describeError } from '@svc/errors';

export interface RetainerOptions {
  /** Records kept at most; beyond it the gateway admits no search until confirmations drain it. */
  readonly maxRecords: number;
  /** How often confirmations are collected. */
  readonly confirmIntervalMs: number;
  /** How often the epoch is checked (a change means Redis lost its data). */
  readonly epochIntervalMs: number;
  /**
   * A record is looked up among the confirmations only once it is this old (default 0): the
   * ledger worker drains every LEDGER_DRAIN_INTERVAL_MS, so asking sooner mostly asks in vain.
   */
  readonly confirmAfterMs?: number;
}

export const DEFAULT_RETAINER_OPTIONS: RetainerOptions = { maxRecords: 200_000, confirmIntervalMs: 1_000, epochIntervalMs: 500, confirmAfterMs: 1_500 };

const CONFIRM_CHUNK = 1_000;

/**
 * Keeps every SettlementRecord this gateway wrote until the ledger worker confirms it is
 * durable (it adds drained request ids to per-minute sets, recoveryKeys.settleConfirmed), so
 * a record that was still in a settlement stream when Redis lost its data is written again.
 *
 * - every `epochIntervalMs` the epoch of every shard is read (and created when missing); when
 *   one differs from the one seen before (that shard lost its data: a flush, or a master
 *   restarted empty), every retained record is appended again to its account's stream and
 *   the account marked dirty. The worker skips a request id already in
 *   `settlements`, and hydration waits a grace period after the epoch was created before it
 *   reads a cold account's stream, so the re-sent records are counted there.
 * - every `confirmIntervalMs` the confirmed ones (current and previous minute) are dropped.
 * - `full` is true at `maxRecords`: the search path then fails closed (503).
 * Timers are unref'd: they never keep the process alive.
 */
export class SettlementRetainer {
  /** By request id, in the order they were first retained (a Map keeps insertion order), with when (monotonic ms). */
  private readonly records = new Map<string, { record: SettlementRecord; retainedAt: number }>();
  /** The epoch of every shard seen so far (one key on a single Redis). */
  private readonly epochs = new ShardEpochs();
  private redisNowMs = 0;
  private timers: NodeJS.Timeout[] = [];
  private busy = { epoch: false, confirm: false };
  private log: Logger | null = null;
  private overflowLogged = false;

  constructor(private readonly redis: RedisClient, private readonly options: RetainerOptions = DEFAULT_RETAINER_OPTIONS) {
    redis.defineCommand('svcEnsureEpoch', { numberOfKeys: 1, lua: ENSURE_EPOCH_LUA });
  }

  useLogger(log: Logger): void {
    this.log = log;
  }

  get size(): number {
    return this.records.size;
  }

  /** Records kept at most. */
  get capacity(): number {
    return this.options.maxRecords;
  }

  get full(): boolean {
    const full = this.records.size >= this.options.maxRecords;
    if (full && !this.overflowLogged) {
      this.overflowLogged = true;
      this.log?.error({ retained: this.records.size }, 'unconfirmed settlement records at the limit: admitting no search until the ledger worker confirms them');
    } else if (!full) {
      this.overflowLogged = false;
    }
    return full;
  }

  /** Starts the loops (idempotent); the first epoch check runs at once. */
  start(): void {
    if (this.timers.length > 0) return;
    const epochTimer = setInterval(() => void this.tick('epoch'), this.options.epochIntervalMs);
    const confirmTimer = setInterval(() => void this.tick('confirm'), this.options.confirmIntervalMs);
    epochTimer.unref();
    confirmTimer.unref();
    this.timers = [epochTimer, confirmTimer];
    void this.tick('epoch');
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  retain(record: SettlementRecord): void {
    const held = this.records.get(record.requestId);
    if (held === undefined) this.records.set(record.requestId, { record, retainedAt: performance.now() });
    else held.record = record;
  }

  has(requestId: string): boolean {
    return this.records.has(requestId);
  }

  private async tick(kind: 'epoch' | 'confirm'): Promise<void> {
    if (this.busy[kind]) return;
    this.busy[kind] = true;
    try {
      if (kind === 'epoch') await this.checkEpoch();
      else await this.confirm();
    } catch (error) {
      this.log?.warn({ err: describeError(error), loop: kind }, 'settlement retention loop failed; it runs again');
    } finally {
      this.busy[kind] = false;
    }
  }

  /**
   * Reads (or creates) the epoch of every shard (docs/decisions/0030); re-sends everything
   * retained when one changed. Returns how many were re-sent.
   */
  async checkEpoch(): Promise<number> {
    const keys = await shardKeys(this.redis, recoveryKeys.shardEpoch);
    const ensure = this.redis as unknown as { svcEnsureEpoch(key: string, token: string): Promise<[string, number]> };
    const replies = await Promise.all(keys.map(async (key) => [key, await ensure.svcEnsureEpoch(key, randomBytes(8).toString('hex'))] as const));
    const now = new Map<string, string>();
    for (const [key, [value, nowMs]] of replies) {
      now.set(key, value);
      this.redisNowMs = nowMs;
    }
    // Every retained record, not only the lost shards' accounts': the worker skips a request
    // id already settled, and a record sent twice costs one more stream entry. A re-send that
    // fails (the cluster still down in part) is made again at the next check.
    return (await this.epochs.observe(now, (lost) => this.resendAll(lost))) ?? 0;
  }

  private async resendAll(lost: readonly string[]): Promise<number> {
    const records = [...this.records.values()].map((held) => held.record);
    this.log?.warn({ lost_epochs: lost, records: records.length }, 'redis lost its data: re-sending unconfirmed settlement records');
    for (let i = 0; i < records.length; i += CONFIRM_CHUNK) {
      const chunk = records.slice(i, i + CONFIRM_CHUNK);
      const accounts = new Set(chunk.map((record) => record.accountId));
      // One pipeline on a single Redis; on a cluster one per slot (accounts' streams live on different nodes).
      const results = await pipelineEach(this.redis, chunk, (record) => redisKeys.settlementStream(record.accountId), (pipeline, record) => {
        pipeline.xadd(redisKeys.settlementStream(record.accountId), '*', SETTLEMENT_FIELD, JSON.stringify(record));
      });
      const failed = results.flat().find(([error]) => error !== null);
      if (failed !== undefined) throw failed[0] ?? new Error('re-send failed');
      await this.redis.sadd(SETTLEMENT_DIRTY_SET, ...accounts);
    }
    return records.length;
  }

  /** Drops the records the worker confirmed; returns how many. */
  async confirm(): Promise<number> {
    if (this.records.size === 0) return 0;
    const nowMs = this.redisNowMs > 0 ? this.redisNowMs : Date.now();
    const bucket = Math.floor(nowMs / SETTLE_CONFIRM_BUCKET_MS);
    // Only records old enough to have been drained: the oldest come first.
    const asOf = performance.now() - (this.options.confirmAfterMs ?? 0);
    const ids: string[] = [];
    for (const [id, { retainedAt }] of this.records) {
      if (retainedAt > asOf) break;
      ids.push(id);
    }
    let dropped = 0;
    for (let i = 0; i < ids.length; i += CONFIRM_CHUNK) {
      const chunk = ids.slice(i, i + CONFIRM_CHUNK);
      // The next bucket too: the worker's clock is Redis's, ours may lag by up to one epoch check.
      const buckets = [bucket - 1, bucket, bucket + 1];
      const results = (await pipelineEach(this.redis, buckets, (b) => recoveryKeys.settleConfirmed(b), (pipeline, b) => {
        pipeline.smismember(recoveryKeys.settleConfirmed(b), ...chunk);
      })).flat();
      const flags = results.map(([error, value]) => {
        if (error !== null) throw error;
        return value as number[];
      });
      chunk.forEach((id, index) => {
        if (flags.some((f) => f[index] === 1)) {
          this.records.delete(id);
          dropped += 1;
        }
      });
    }
    return dropped;
  }
}
