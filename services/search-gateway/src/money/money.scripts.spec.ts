import { redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { keySlot } from '@svc/redis-client';
import type { MergedCall, ScriptCall } from '../redis/redis-batch';
import { moneyScope } from './money.scope';
import {
  encodeAdmitArgs, encodeIdempotencyReleaseArgs, encodeIdempotencyStoreArgs, encodeLeaseArgs, encodeLeaseExtendArgs, encodeReleaseArgs,
  encodeReserveArgs, encodeSettleArgs, MERGED_ADMIT, MERGED_LEASE, MERGED_SETTLE, MONEY_SCRIPTS, OUTCOME_TTL_MS, SCRIPT,
  SETTLED_BUCKET_GRACE_MS, SETTLED_BUCKET_MS, ADMIT_LUA, RESERVATION_RULE_LUA, RESERVE_LUA,
} from './money.scripts';

const NOW = Date.UTC(2031, 4, 20, 10, 30);
const record = (limitMicros: number | null = null, limitReset: KeyRecord['limitReset'] = null): KeyRecord =>
  ({ id: 'key_1', accountId: 'acc_1', kind: 'api', disabled: false, expiresAtMs: null, limitMicros, limitReset, version: 1, deleted: false });
const plainScope = moneyScope(record(), 'req_1', null, NOW, 90_000);
const idemScope = moneyScope(record(30_000, 'weekly'), 'req_2', 'digest', NOW, 90_000);
const limits = { ratePerSecond: 5, burst: 10, accountCap: 3, leaseTtlMs: 60_000 };
const claim = { value: '{"rid":"req_2"}', ttlMs: 45_000 };

function declaredKeys(name: string): number | undefined {
  return MONEY_SCRIPTS.find((script) => script.name === name)?.numberOfKeys;
}

/** A script called by name declares exactly as many keys as its encoder gives. */
function expectDeclared(call: ScriptCall): void {
  expect(call.kind).toBe('script');
  expect(declaredKeys(call.name)).toBe(call.keys.length);
}

/** Every key of one call is in one hash slot (the script runs on one node of a cluster). */
function slotsOf(call: ScriptCall | MergedCall): Set<number> {
  const keys = call.kind === 'merged' ? [...call.keys, ...call.memberKeys] : call.keys;
  return new Set(keys.map((key) => keySlot(key)));
}

describe('money script argument encoders', () => {
  describe('every script', () => {
    it('is defined once, by a name of SCRIPT, and the merged ones with members\' keys give their count themselves', () => {
      expect(MONEY_SCRIPTS.map((s) => s.name).sort()).toEqual(Object.values(SCRIPT).sort());
      expect(declaredKeys(SCRIPT.admit)).toBeUndefined();
      expect(declaredKeys(SCRIPT.settle)).toBeUndefined();
      expect(MERGED_ADMIT.dynamicKeys && MERGED_SETTLE.dynamicKeys && !MERGED_LEASE.dynamicKeys).toBe(true);
    });
  });

  describe('encodeLeaseArgs (LEASE_LUA, merged per provider)', () => {
    it('puts the provider\'s lease set in KEYS, cap and lifetime in the fixed ARGV, the lease id as the member', () => {
      const call = encodeLeaseArgs({ provider: 'tavily', leaseId: 'req_1:2', cap: 7, lifetimeMs: 1_500 });
      expect(call).toEqual({ kind: 'merged', merged: MERGED_LEASE, keys: [redisKeys.providerLeases('tavily')], fixed: [7, 1_500], memberKeys: [], memberArgs: ['req_1:2'] });
    });

    it('a cap of 0 is passed as is (the script refuses every lease)', () => {
      expect(encodeLeaseArgs({ provider: 'exa', leaseId: 'r:0', cap: 0, lifetimeMs: 10 }).fixed).toEqual([0, 10]);
    });
  });

  describe('encodeAdmitArgs (ADMIT_LUA, merged per account)', () => {
    it('lays out 3 account keys + 5 keys and 4 limits + 9 arguments, as the script counts them', () => {
      const call = encodeAdmitArgs({ scope: plainScope, limits, reserve: { index: 0, amountMicros: 5_000 } });
      expect(call.merged).toBe(MERGED_ADMIT);
      expect(call.keys).toEqual([plainScope.balanceKey, plainScope.reservedKey, plainScope.inFlightKey]);
      expect(call.fixed).toEqual([5, 10, 3, 60_000]);
      // n = (#KEYS - 3) / 5 and #ARGV = 4 + 9n, for one member.
      expect(call.memberKeys).toHaveLength(5);
      expect(call.memberArgs).toHaveLength(9);
    });

    it('without a claim or an Idempotency-Key: claim \'0\', empty value, ttl 0, and the reservation hash in the idempotency slot', () => {
      const call = encodeAdmitArgs({ scope: plainScope, limits, reserve: { index: 0, amountMicros: 5_000 } });
      expect(call.memberKeys).toEqual([plainScope.totalKey, plainScope.reservationKey, plainScope.reservationKey, plainScope.rateKey, plainScope.holdKey]);
      expect(call.memberArgs).toEqual([5_000, -1, 0, 90_000, 0, '0', '', 0, 'req_1']);
    });

    it('with a claim: \'1\', its value and ttl; the key\'s period counter as the limit counter and its limit', () => {
      const call = encodeAdmitArgs({ scope: idemScope, limits, reserve: { index: 2, amountMicros: 9_000, claim } });
      expect(call.memberKeys).toEqual([idemScope.periodKeys[1], idemScope.reservationKey, redisKeys.idempotency('acc_1', 'key_1', 'digest'), idemScope.rateKey, idemScope.holdKey]);
      expect(call.memberArgs).toEqual([9_000, 30_000, 2, 90_000, 0, '1', claim.value, 45_000, 'req_2']);
    });

    it('an explicit undefined claim is no claim', () => {
      expect(encodeAdmitArgs({ scope: plainScope, limits, reserve: { index: 0, amountMicros: 1, claim: undefined } }).memberArgs.slice(5, 8)).toEqual(['0', '', 0]);
    });

    it('keeps every key in the account\'s hash slot', () => {
      expect(slotsOf(encodeAdmitArgs({ scope: idemScope, limits, reserve: { index: 0, amountMicros: 1, claim } })).size).toBe(1);
    });
  });

  describe('encodeReserveArgs (RESERVE_LUA)', () => {
    it('lays out its 6 keys and 8 arguments; without a claim the idempotency slot holds the reservation hash', () => {
      const call = encodeReserveArgs({ scope: plainScope, reserve: { index: 1, amountMicros: 6_000 } });
      expectDeclared(call);
      expect(call.keys).toEqual([plainScope.balanceKey, plainScope.reservedKey, plainScope.totalKey, plainScope.reservationKey, plainScope.reservationKey, plainScope.holdKey]);
      expect(call.args).toEqual([6_000, -1, 1, 90_000, 0, '0', '', 0]);
    });

    it('with a claim and an Idempotency-Key: the key in slot 5, claim \'1\', value, ttl', () => {
      const call = encodeReserveArgs({ scope: idemScope, reserve: { index: 3, amountMicros: 0, claim } });
      expect(call.keys[4]).toBe(idemScope.idempotencyKey);
      expect(call.args).toEqual([0, 30_000, 3, 90_000, 0, '1', claim.value, 45_000]);
      expect(slotsOf(call).size).toBe(1);
    });
  });

  describe('encodeReleaseArgs (RELEASE_LUA)', () => {
    it('gives balance, reserved total, hold and reservation hash, then index, keep and the unused argument', () => {
      const call = encodeReleaseArgs({ scope: plainScope, index: 4, keepMicros: 3_000 });
      expectDeclared(call);
      expect(call.keys).toEqual([plainScope.balanceKey, plainScope.reservedKey, plainScope.holdKey, plainScope.reservationKey]);
      expect(call.args).toEqual([4, 3_000, '0']);
    });

    it('keep 0 gives the whole reservation of the attempt back', () => {
      expect(encodeReleaseArgs({ scope: plainScope, index: 0, keepMicros: 0 }).args).toEqual([0, 0, '0']);
    });
  });

  describe('encodeSettleArgs (SETTLE_LUA, merged per account)', () => {
    const record5 = { chargedMicros: 5_000 };
    const firstSentAtMs = Date.UTC(2031, 4, 20, 10, 33, 12, 345);
    const bucket = firstSentAtMs - (firstSentAtMs % SETTLED_BUCKET_MS);

    it('lays out 4 account keys + 8 keys and 2 fixed + 11 arguments, as the script counts them', () => {
      const call = encodeSettleArgs({ scope: plainScope, settlement: { record: record5, outcome: null }, recordJson: '{"r":1}', firstSentAtMs });
      expect(call.merged).toBe(MERGED_SETTLE);
      expect(call.keys).toEqual([plainScope.balanceKey, plainScope.reservedKey, redisKeys.settlementStream('acc_1'), plainScope.inFlightKey]);
      expect(call.fixed).toEqual([OUTCOME_TTL_MS, SETTLEMENT_FIELD]);
      expect(call.memberKeys).toEqual([plainScope.holdKey, plainScope.totalKey, plainScope.reservationKey, redisKeys.settledMarkers('acc_1', bucket), plainScope.reservationKey, ...plainScope.periodKeys]);
      expect(call.memberArgs).toEqual([5_000, '0', '{"r":1}', bucket + SETTLED_BUCKET_MS + SETTLED_BUCKET_GRACE_MS, '0', '', 'req_1', '0', ...plainScope.periodExpireAtMs]);
    });

    it('the settled-marker bucket is the first send\'s (a re-send of the same outgoing settlement checks the same set)', () => {
      const outgoing = { scope: plainScope, settlement: { record: record5, outcome: null }, recordJson: '{}', firstSentAtMs: bucket + SETTLED_BUCKET_MS - 1 };
      expect(encodeSettleArgs(outgoing).memberKeys[3]).toBe(redisKeys.settledMarkers('acc_1', bucket));
      expect(encodeSettleArgs({ ...outgoing, firstSentAtMs: bucket + SETTLED_BUCKET_MS }).memberKeys[3]).toBe(redisKeys.settledMarkers('acc_1', bucket + SETTLED_BUCKET_MS));
    });

    it('stores the outcome only with an Idempotency-Key; gives the account lease back only when asked', () => {
      const stored = encodeSettleArgs({ scope: idemScope, settlement: { record: record5, outcome: 'OUT', releaseAccountLease: true }, recordJson: '{}', firstSentAtMs });
      expect(stored.memberKeys[4]).toBe(idemScope.idempotencyKey);
      expect(stored.memberArgs.slice(4, 8)).toEqual(['1', 'OUT', 'req_2', '1']);
      // An outcome without an Idempotency-Key (the key slot holds the reservation hash) is not stored.
      const keyless = encodeSettleArgs({ scope: plainScope, settlement: { record: record5, outcome: 'OUT', releaseAccountLease: false }, recordJson: '{}', firstSentAtMs });
      expect(keyless.memberArgs.slice(4, 8)).toEqual(['0', 'OUT', 'req_1', '0']);
      expect(slotsOf(stored).size).toBe(1);
    });
  });

  describe('encodeIdempotencyStoreArgs and encodeIdempotencyReleaseArgs', () => {
    it('store: the key, then request id, outcome and the 24 h ttl', () => {
      const call = encodeIdempotencyStoreArgs({ key: 'k', requestId: 'req_9', outcome: '{"state":"done"}' });
      expectDeclared(call);
      expect(call).toEqual({ kind: 'script', name: SCRIPT.idempotencyStore, keys: ['k'], args: ['req_9', '{"state":"done"}', 24 * 3_600_000] });
    });

    it('release: the key, then the request id whose claim alone it deletes', () => {
      const call = encodeIdempotencyReleaseArgs({ key: 'k', requestId: 'req_9' });
      expectDeclared(call);
      expect(call).toEqual({ kind: 'script', name: SCRIPT.idempotencyRelease, keys: ['k'], args: ['req_9'] });
    });
  });

  describe('encodeLeaseExtendArgs (LEASE_EXTEND_LUA)', () => {
    it('the account\'s in-flight set, then the request id and the new lease ttl', () => {
      const call = encodeLeaseExtendArgs({ inFlightKey: plainScope.inFlightKey, requestId: 'req_1', ttlMs: 60_000 });
      expectDeclared(call);
      expect(call).toEqual({ kind: 'script', name: SCRIPT.leaseExtend, keys: [plainScope.inFlightKey], args: ['req_1', 60_000] });
    });
  });
});

describe('the reservation rule', () => {
  it('is written once: RESERVE_LUA and ADMIT_LUA begin with it and decide limit and balance only through it', () => {
    for (const script of [RESERVE_LUA, ADMIT_LUA]) {
      expect(script.startsWith(RESERVATION_RULE_LUA)).toBe(true);
      const own = script.slice(RESERVATION_RULE_LUA.length);
      expect(own).toMatch(/reservationVerdict\(/);
      expect(own).not.toMatch(/verdict = 'limit'|verdict = 'balance'/);
    }
  });
});

