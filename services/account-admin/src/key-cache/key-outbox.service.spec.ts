import type { KeyRecord } from '@svc/contracts';
import type { AppConfig } from '../config';
import type { KeyRow } from '../db/key-row';
import { createLogger } from '../logging/logger';
import type { KeyCacheService } from './key-cache.service';
import type { KeyOutboxRepository, PendingKey, PendingKeyHandler } from './key-outbox.repository';
import { KeyOutboxService } from './key-outbox.service';

function row(id: string, version: number): KeyRow {
  const at = new Date('2026-01-01T00:00:00Z');
  return {
    id, accountId: 'acct_x', kind: 'api', name: '', keyHash: `h-${id}`, label: 'svc-abcd…', limitMicros: null, limitReset: null,
    expiresAt: null, disabled: false, version, deletedAt: null, createdAt: at, updatedAt: at, lastUsedAt: null, allowedModels: [], allowedIps: [],
  };
}

function setup(pending: PendingKey[], failOn: string | null) {
  const written: string[] = [];
  const kept: string[][] = [];
  const outbox = {
    processBatch: async (_limit: number, handle: PendingKeyHandler) => {
      const done = await handle(pending);
      kept.push(pending.map((p) => p.keyHash).filter((hash) => !done.has(hash)));
      return pending.length;
    },
  } as unknown as KeyOutboxRepository;
  const cache = {
    writeAndPublish: async (keyHash: string, record: KeyRecord, writtenAtMs: number) => {
      if (keyHash === failOn) throw new Error('READONLY');
      written.push(`${keyHash} v${record.version} at ${writtenAtMs}`);
    },
  } as unknown as KeyCacheService;
  const config = { KEY_OUTBOX_INTERVAL_MS: 500 } as AppConfig;
  return { written, kept, loop: new KeyOutboxService(outbox, cache, config, createLogger('silent')) };
}

describe('KeyOutboxService.drain', () => {
  it('writes each pending key as read from Postgres, stamped with the read time, and clears their rows', async () => {
    const { written, kept, loop } = setup([{ keyHash: 'h-a', row: row('a', 3), readAtMs: 42 }, { keyHash: 'h-b', row: row('b', 1), readAtMs: 42 }], null);
    await expect(loop.drain()).resolves.toBe(2);
    expect(written).toEqual(['h-a v3 at 42', 'h-b v1 at 42']);
    expect(kept).toEqual([[]]);
  });

  it('stops the pass at the first Redis failure and keeps that row and every later one', async () => {
    const pending = ['a', 'b', 'c'].map((id) => ({ keyHash: `h-${id}`, row: row(id, 2), readAtMs: 1 }));
    const { written, kept, loop } = setup(pending, 'h-b');
    await expect(loop.drain()).resolves.toBe(1);
    expect(written).toEqual(['h-a v2 at 1']);
    expect(kept).toEqual([['h-b', 'h-c']]);
  });
});
