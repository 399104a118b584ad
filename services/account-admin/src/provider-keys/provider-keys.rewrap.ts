import { rewrapProviderKey } from '@svc/keys';
import type { KekRing, ProviderKeyEnvelope } from '@svc/keys';
import type { Logger } from '../logging/logger';
import type { ProviderKeysRepository } from './provider-keys.repository';

export interface RewrapResult {
  /** Records whose data key is now wrapped by the current KEK. */
  rewrapped: number;
  /** Records changed meanwhile (a PUT stored them under the current KEK already). */
  skipped: number;
  /** Records that no configured KEK opens (left as they are, logged). */
  failed: number;
  /** Records still under another KEK after the pass, by KEK id (empty when the rotation is complete). */
  remaining: { kekId: string; count: number }[];
}

/**
 * The rotation command's work: every record not wrapped by the current KEK has its data key
 * re-wrapped under it (the provider key's own ciphertext is kept, so nothing readable is ever
 * written). Pages through the rows; a row a concurrent PUT replaced is left alone.
 */
export async function rewrapAll(repository: ProviderKeysRepository, ring: KekRing, log: Logger, batchSize = 200): Promise<RewrapResult> {
  let rewrapped = 0;
  let skipped = 0;
  const failed = new Set<string>();
  for (;;) {
    const page = await repository.notWrappedBy(ring.current.id, batchSize + failed.size);
    const rows = page.filter((row) => !failed.has(`${row.accountId}/${row.provider}`));
    if (rows.length === 0) break;
    for (const row of rows) {
      let next: ProviderKeyEnvelope | null;
      try {
        next = rewrapProviderKey(ring, row.accountId, row.provider, row.envelope);
      } catch (error) {
        failed.add(`${row.accountId}/${row.provider}`);
        log.error({ account_id: row.accountId, provider: row.provider, kek_id: row.envelope.kekId, err: error instanceof Error ? error.message : String(error) }, 'provider key not re-wrapped');
        continue;
      }
      if (next === null) continue;
      if (await repository.rewrap(row.accountId, row.provider, row.envelope.kekId, next)) rewrapped += 1;
      else skipped += 1;
    }
    if (page.length < batchSize + failed.size) break;
  }
  const remaining = (await repository.countByKek()).filter((group) => group.kekId !== ring.current.id);
  return { rewrapped, skipped, failed: failed.size, remaining };
}
