import Redis from 'ioredis';
import { redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord, SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { redisUrl, seededRandom } from '@svc/test-kit';
import { MoneyRepository } from '../src/money/money.repository';
import type { AdmissionRequest, AdmissionVerdict } from '../src/money/money.ops';
import { moneyScope } from '../src/money/money.scope';
import type { MoneyScope } from '../src/money/money.scope';

/**
 * The money scripts merge the searches of one account that share a flush into one call
 * (RedisBatch). The guarantee: a merged call decides and writes exactly what the same
 * requests decide and write one call at a time, in the same order. Seeded scenarios on the
 * real Redis (database 11, shared with admission.int.spec.ts; suites run one at a time):
 * every request of one account is issued in one turn of the event loop on one account, and
 * awaited one by one on a twin account with the same starting state; verdicts and the
 * final state of both accounts must be equal.
 */
const DB = 11;
const SEEDS = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233];
const AMOUNTS = [5_000, 6_000, 10_000, 15_000];

interface Scenario {
  balance: number;
  admission: AdmissionRequest;
  /** Per key: its limit (null: none). */
  limits: (number | null)[];
  requests: { key: number; amount: number; claim: number | null }[];
  /** Per request: settle it with this charge (when admitted 'ok'), or null. */
  charges: (number | null)[];
}

function scenario(seed: number): Scenario {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const limits = [pick([null, 12_000, 25_000, 40_000]), pick([null, 20_000])];
  const requests = Array.from({ length: 12 }, () => ({ key: Math.floor(next() * limits.length), amount: pick(AMOUNTS), claim: next() < 0.3 ? Math.floor(next() * 3) : null }));
  return {
    balance: Math.floor(next() * 70_000),
    // A rate so low that no token comes back while the test runs: remaining counts are exact.
    admission: { ratePerSecond: 0.001, burst: 2 + Math.floor(next() * 6), accountCap: 3 + Math.floor(next() * 8), leaseTtlMs: 60_000 },
    limits,
    requests,
    charges: requests.map((r) => (next() < 0.8 ? Math.floor(next() * (r.amount + 1)) : null)),
  };
}

function keyRecord(accountId: string, keyId: string, limitMicros: number | null): KeyRecord {
  return { id: keyId, accountId, kind: 'api', disabled: false, expiresAtMs: null, limitMicros, limitReset: null, version: 1, deleted: false };
}

function record(scope: MoneyScope, chargedMicros: number, reservedMicros: number): SettlementRecord {
  return {
    v: 1, requestId: scope.requestId, accountId: scope.accountId, keyId: scope.keyId, settledAtMs: 1_800_000_000_000, chargedMicros,
    attempts: [{ index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros, chargedMicros, timedOut: false, results: 10 }],
  };
}

/**
 * A verdict without what differs between the twins: the stored idempotency value names a
 * request, and the delay of a refusal shrinks by the microseconds between one-at-a-time calls.
 */
function comparable(verdict: AdmissionVerdict): unknown {
  if (verdict.kind === 'rate_limited') {
    expect(verdict.retryAfterMs).toBeGreaterThan(0);
    return { kind: 'rate_limited' };
  }
  if (verdict.kind !== 'admitted') return verdict;
  return { kind: 'admitted', remaining: verdict.remaining, verdict: verdict.verdict.kind === 'dup' ? 'dup' : verdict.verdict.kind };
}

describe('merged money scripts decide and write exactly what one-at-a-time calls do (real Redis)', () => {
  let redis: Redis;
  let money: MoneyRepository;

  beforeAll(() => {
    redis = new Redis(redisUrl(DB));
    money = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }, { retainer: { maxRecords: 100_000, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 } });
  });

  afterAll(async () => {
    money.close();
    // The provider leases taken here are not given back (not what this suite is about): free
    // them for the suites that share this database.
    await redis.del(redisKeys.providerLeases('exa'));
    redis.disconnect();
  });

  /** One account's run of a scenario: admissions, then settlements, together or one at a time. */
  async function run(s: Scenario, together: boolean): Promise<{ verdicts: unknown[]; settled: unknown[]; state: Record<string, unknown> }> {
    const accountId = newId('account');
    const keyIds = s.limits.map(() => newId('apiKey'));
    await redis.set(redisKeys.accountBalance(accountId), String(s.balance));
    const scopes = s.requests.map((r) => moneyScope(keyRecord(accountId, keyIds[r.key] ?? '', s.limits[r.key] ?? null), newId('request'), r.claim === null ? null : `claim-${r.claim}`, Date.now(), 60_000));
    const admitOne = (i: number) => {
      const scope = scopes[i] as MoneyScope;
      const r = s.requests[i];
      const claim = r?.claim === null || r === undefined ? undefined : { value: JSON.stringify({ rid: scope.requestId }), ttlMs: 60_000 };
      return money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 1_000_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: r?.amount ?? 0, ...(claim === undefined ? {} : { claim }) }, s.admission);
    };
    const admitted: { admission: AdmissionVerdict }[] = [];
    if (together) admitted.push(...(await Promise.all(s.requests.map((_, i) => admitOne(i)))));
    else for (let i = 0; i < s.requests.length; i++) admitted.push(await admitOne(i));

    const toSettle = s.requests.map((_, i) => i).filter((i) => {
      const verdict = admitted[i]?.admission;
      return verdict?.kind === 'admitted' && verdict.verdict.kind === 'ok' && s.charges[i] !== null;
    });
    const settleOne = async (i: number): Promise<void> => {
      const scope = scopes[i] as MoneyScope;
      await money.settle(scope, [{ kind: 'unleaseAccount' }], { record: record(scope, s.charges[i] ?? 0, s.requests[i]?.amount ?? 0), outcome: null });
    };
    if (together) await Promise.all(toSettle.map(settleOne));
    else for (const i of toSettle) {
      await settleOne(i);
      expect(await money.drainSettlements(5_000)).toBe(true);
    }
    expect(await money.drainSettlements(5_000)).toBe(true);

    const stream = await redis.xrange(redisKeys.settlementStream(accountId), '-', '+');
    const ids = new Map(scopes.map((scope, i) => [scope.requestId, i]));
    const state: Record<string, unknown> = {
      balance: await redis.get(redisKeys.accountBalance(accountId)),
      reserved: await redis.get(redisKeys.accountReserved(accountId)),
      inFlight: (await redis.zrange(redisKeys.accountInFlight(accountId), '0', '-1')).map((rid) => ids.get(rid) ?? -1).sort((a, b) => a - b),
      usage: await Promise.all(keyIds.map((keyId) => redis.get(redisKeys.keyTotalUsage(accountId, keyId)))),
      holds: await Promise.all(keyIds.map((keyId) => redis.get(redisKeys.keyHold(accountId, keyId)))),
      held: await Promise.all(scopes.map((scope) => redis.hgetall(scope.reservationKey))),
      claims: await Promise.all([0, 1, 2].flatMap((c) => keyIds.map(async (keyId) => {
        const value = await redis.get(redisKeys.idempotency(accountId, keyId, `claim-${c}`));
        return value === null ? null : ids.get((JSON.parse(value) as { rid: string }).rid);
      }))),
      // The records in stream order, by the index of their request.
      stream: stream.map(([, fields]) => ids.get((JSON.parse(fields[fields.indexOf(SETTLEMENT_FIELD) + 1] ?? '{}') as { requestId: string }).requestId)),
    };
    // And what both must hold on their own: every micro-dollar held, charged or given back is accounted for.
    const ok = new Set(s.requests.map((_, i) => i).filter((i) => {
      const verdict = admitted[i]?.admission;
      return verdict?.kind === 'admitted' && verdict.verdict.kind === 'ok';
    }));
    const leased = s.requests.map((_, i) => i).filter((i) => {
      const verdict = admitted[i]?.admission;
      return verdict?.kind === 'admitted' && verdict.verdict.kind !== 'dup';
    });
    const settledSet = new Set(toSettle);
    const held = [...ok].filter((i) => !settledSet.has(i)).reduce((sum, i) => sum + (s.requests[i]?.amount ?? 0), 0);
    const charged = toSettle.reduce((sum, i) => sum + (s.charges[i] ?? 0), 0);
    expect(Number(state.balance)).toBe(s.balance - held - charged);
    expect(Number(state.reserved ?? '0')).toBe(held);
    keyIds.forEach((_, k) => {
      const mine = (i: number): boolean => s.requests[i]?.key === k;
      const spent = toSettle.filter(mine).reduce((sum, i) => sum + (s.charges[i] ?? 0), 0);
      const holding = [...ok].filter((i) => mine(i) && !settledSet.has(i)).reduce((sum, i) => sum + (s.requests[i]?.amount ?? 0), 0);
      // The counters count charges only; what open searches hold is the key's hold (limit or not).
      expect(Number((state.usage as (string | null)[])[k] ?? '0')).toBe(spent);
      expect(Number((state.holds as (string | null)[])[k] ?? '0')).toBe(holding);
    });
    expect(state.inFlight).toEqual(leased.filter((i) => !settledSet.has(i)).sort((a, b) => a - b));
    expect((state.stream as unknown[]).length).toBe(toSettle.length);
    return { verdicts: admitted.map((a) => comparable(a.admission)), settled: toSettle, state };
  }

  it.each(SEEDS)('seed %i: 12 admissions and their settlements in one flush equal the same one at a time', async (seed) => {
    const s = scenario(seed);
    const merged = await run(s, true);
    const sequential = await run(s, false);
    expect(merged.verdicts).toEqual(sequential.verdicts);
    expect(merged.settled).toEqual(sequential.settled);
    expect(merged.state).toEqual(sequential.state);
  });

  it('the seeds cover every verdict: ok, limit, balance, dup, rate and busy', async () => {
    const kinds = new Set<string>();
    for (const seed of SEEDS) {
      const { verdicts } = await run(scenario(seed), true);
      for (const v of verdicts as { kind: string; verdict?: string }[]) kinds.add(v.kind === 'admitted' ? String(v.verdict) : v.kind);
    }
    expect([...kinds].sort()).toEqual(['balance', 'dup', 'limit', 'ok', 'rate_limited', 'too_many']);
  });

  it('one corrupt rate state fails only the searches of its key; the others of the same call are decided', async () => {
    const accountId = newId('account');
    const good = keyRecord(accountId, newId('apiKey'), null);
    const bad = keyRecord(accountId, newId('apiKey'), null);
    await redis.set(redisKeys.accountBalance(accountId), '100000');
    await redis.set(redisKeys.keyRate(accountId, bad.id), 'not a number');
    const admission = { ratePerSecond: 10, burst: 10, accountCap: 10, leaseTtlMs: 60_000 };
    const outcomes = await Promise.allSettled([good, bad, good].map((rec) => {
      const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
      return money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 1_000_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: 5_000 }, admission);
    }));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: 'admit: rate state is not a number' }) });
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('90000');
  });
});
