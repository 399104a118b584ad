import { AppError } from '@svc/errors';
import { newId } from '@svc/ids';
import pino from 'pino';
import type { KeyCacheRepository, Usage, UsageQuery } from '../key-cache/key-cache.repository';
import type { KeyCacheService } from '../key-cache/key-cache.service';
import type { KeyRow } from '../db/key-row';
import type { KeyChanges, KeysRepository } from './keys.repository';
import { decodeCursor, encodeCursor, KeysService } from './keys.service';

const accountId = newId('account');

function row(overrides: Partial<KeyRow> = {}): KeyRow {
  const now = new Date('2026-03-04T05:06:07Z');
  return {
    id: newId('apiKey'), accountId, kind: 'api', name: 'k', keyHash: 'a'.repeat(64), label: 'svc-abcd…',
    limitMicros: null, limitReset: null, expiresAt: null, disabled: false, version: 1, deletedAt: null,
    createdAt: now, updatedAt: now, lastUsedAt: null, allowedModels: [], allowedIps: [], ...overrides,
  };
}

function setup(current: KeyRow | null, redisDown = false) {
  const updates: KeyChanges[] = [];
  const propagated: Array<{ keyHash: string; version: number }> = [];
  const repo = {
    findLive: async () => current,
    create: async () => ({ row: current ?? row(), outboxId: 1n }),
    update: async (_a: string, _k: string, _id: string, changes: KeyChanges) => {
      updates.push(changes);
      return current === null ? null : { row: { ...current, ...changes, version: current.version + 1 } as KeyRow, outboxId: 1n };
    },
    softDelete: async () => (current === null ? null : { row: { ...current, deletedAt: new Date(), version: current.version + 1 }, outboxId: 1n }),
  } as unknown as KeysRepository;
  const cache = {
    propagate: async (change: { keyHash: string; record: { version: number }; outboxId: bigint }) => {
      propagated.push({ keyHash: change.keyHash, version: change.record.version });
      return true;
    },
  } as unknown as KeyCacheService;
  const counters = {
    readUsage: async (queries: UsageQuery[]): Promise<Usage[]> => {
      if (redisDown) throw new Error('Connection is closed.');
      return queries.map(() => ({ periodMicros: 7_500_000, totalMicros: 9_000_000 }));
    },
  } as unknown as KeyCacheRepository;
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  return { service: new KeysService(repo, cache, counters, logger), updates, propagated, warnings };
}

describe('KeysService', () => {
  it('clears the reset period when a PATCH removes the limit', async () => {
    const current = row({ limitMicros: 10_000_000, limitReset: 'monthly' });
    const { service, updates, propagated } = setup(current);
    const result = await service.updateApiKey(accountId, current.id, { limitMicros: null });
    expect(updates).toEqual([{ limitMicros: null, limitReset: null }]);
    expect(result.changedKeyHash).toBe(current.keyHash);
    expect(propagated).toEqual([{ keyHash: current.keyHash, version: 2 }]);
  });

  it('refuses a reset period on a key without a limit, and changes nothing', async () => {
    const current = row();
    const { service, updates, propagated } = setup(current);
    await expect(service.updateApiKey(accountId, current.id, { limitReset: 'daily' })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(updates).toEqual([]);
    expect(propagated).toEqual([]);
  });

  it('answers not_found without touching storage for an id that is not an API key id', async () => {
    const { service } = setup(row());
    for (const id of [newId('managementKey'), 'key_short', '../etc']) {
      await expect(service.getApiKey(accountId, id)).rejects.toMatchObject({ code: 'not_found' });
      await expect(service.deleteApiKey(accountId, id)).rejects.toBeInstanceOf(AppError);
    }
  });

  it('computes usage and the remaining limit from the counters, never below zero', async () => {
    const current = row({ limitMicros: 5_000_000, limitReset: 'daily' });
    const { service } = setup(current);
    const view = await service.getApiKey(accountId, current.id);
    expect(view).toMatchObject({ usage_usd: 7.5, usage_total_usd: 9, limit_remaining_usd: 0, limit_usd: 5 });
  });

  it('with Redis unreachable, a committed PATCH still answers, with null usage and a warning', async () => {
    const current = row({ limitMicros: 5_000_000, limitReset: 'daily' });
    const { service, updates, propagated, warnings } = setup(current, true);
    const result = await service.updateApiKey(accountId, current.id, { name: 'renamed' });
    expect(updates).toEqual([{ name: 'renamed' }]);
    expect(propagated).toEqual([{ keyHash: current.keyHash, version: 2 }]);
    expect(result.value).toMatchObject({ name: 'renamed', usage_usd: null, usage_total_usd: null, limit_remaining_usd: null, limit_usd: 5 });
    expect(result.changedKeyHash).toBe(current.keyHash);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/usage counters could not be read/);
    expect(warnings[0]).not.toContain(current.keyHash);
  });

  it('with Redis unreachable, a committed POST still answers with the secret and null usage', async () => {
    const { service, warnings } = setup(row(), true);
    const result = await service.createApiKey(accountId, { name: 'k' });
    expect(result.value.secret).toMatch(/^svc-/);
    expect(result.value).toMatchObject({ usage_usd: null, usage_total_usd: null, limit_remaining_usd: null });
    expect(warnings).toHaveLength(1);
  });

  it('a plain read still fails when Redis is unreachable (nothing was committed)', async () => {
    const { service } = setup(row(), true);
    await expect(service.getApiKey(accountId, row().id)).rejects.toThrow('Connection is closed.');
  });

  it('round-trips its cursor and rejects tampered ones', () => {
    const position = { createdAt: new Date('2026-01-01T00:00:00.123Z'), id: newId('apiKey') };
    expect(decodeCursor(encodeCursor(position), 'apiKey')).toEqual(position);
    expect(() => decodeCursor(encodeCursor(position), 'managementKey')).toThrow(AppError);
    expect(() => decodeCursor(Buffer.from('{"t":-1,"i":"key_x"}').toString('base64url'), 'apiKey')).toThrow(AppError);
    // Past the range a Date can hold (the repository would fail on an Invalid Date).
    for (const t of [8_640_000_000_000_001, Number.MAX_SAFE_INTEGER]) {
      expect(() => decodeCursor(Buffer.from(JSON.stringify({ t, i: position.id })).toString('base64url'), 'apiKey')).toThrow('cursor is not valid');
    }
    expect(() => decodeCursor('!!', 'apiKey')).toThrow(AppError);
  });
});
