import type { KeyRecord } from '@svc/contracts';
import { createLogger } from '../logging/logger';
import type { KeyCacheRepository } from './key-cache.repository';
import { KeyCacheService } from './key-cache.service';
import type { KeyOutboxRepository } from './key-outbox.repository';

const record: KeyRecord = {
  id: 'key_x', accountId: 'acct_x', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 4, deleted: false,
};

function fakes(options: { writeFails?: boolean } = {}) {
  const calls: string[] = [];
  const repo = {
    writeRecord: async (_hash: string, r: KeyRecord, writtenAtMs: number) => {
      if (options.writeFails === true) throw new Error('connection refused');
      calls.push(`write v${r.version} at ${writtenAtMs}`);
      return true;
    },
    publishChange: async (m: { version: number }) => { calls.push(`publish v${m.version}`); },
  } as unknown as KeyCacheRepository;
  const outbox = {
    removeUnlessClaimed: async (id: bigint) => { calls.push(`remove ${id}`); },
  } as unknown as KeyOutboxRepository;
  return { calls, service: new KeyCacheService(repo, outbox, createLogger('silent')) };
}

describe('KeyCacheService', () => {
  it('writes the record (stamped), then publishes, then deletes the outbox row', async () => {
    const { calls, service } = fakes();
    await expect(service.propagate({ keyHash: 'h', record, outboxId: 7n, asOfMs: 1234 })).resolves.toBe(true);
    expect(calls).toEqual(['write v4 at 1234', 'publish v4', 'remove 7']);
  });

  it('does not fail the caller when Redis fails, and keeps the outbox row for the loop', async () => {
    const { calls, service } = fakes({ writeFails: true });
    await expect(service.propagate({ keyHash: 'h', record, outboxId: 7n, asOfMs: 1234 })).resolves.toBe(false);
    expect(calls).toEqual([]);
  });
});
