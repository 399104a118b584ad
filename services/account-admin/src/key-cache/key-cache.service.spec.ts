import type { KeyRecord } from '@svc/contracts';
import { waitFor } from '@svc/test-kit';
import { createLogger } from '../logging/logger';
import type { KeyCacheRepository } from './key-cache.repository';
import { KeyCacheService } from './key-cache.service';

const record: KeyRecord = {
  id: 'key_x', accountId: 'acct_x', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 4, deleted: false,
};

describe('KeyCacheService', () => {
  it('writes the record before publishing the change', async () => {
    const calls: string[] = [];
    const repo = {
      writeRecord: async () => { calls.push('write'); return true; },
      publishChange: async (m: { version: number }) => { calls.push(`publish v${m.version}`); },
    } as unknown as KeyCacheRepository;
    const service = new KeyCacheService(repo, createLogger('silent'));
    await expect(service.propagate('h', record)).resolves.toBe(true);
    expect(calls).toEqual(['write', 'publish v4']);
  });

  it('does not fail the caller when Redis fails, and retries in the background until it succeeds', async () => {
    let failures = 1;
    const published: number[] = [];
    const repo = {
      writeRecord: async () => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('connection refused');
        }
        return true;
      },
      publishChange: async (m: { version: number }) => { published.push(m.version); },
    } as unknown as KeyCacheRepository;
    const service = new KeyCacheService(repo, createLogger('silent'));
    await expect(service.propagate('h', record)).resolves.toBe(false);
    expect(published).toEqual([]);
    await waitFor('background retry', () => (published.length > 0 ? true : undefined), { timeoutMs: 10_000 });
    expect(published).toEqual([4]);
    service.onModuleDestroy();
  });
});
