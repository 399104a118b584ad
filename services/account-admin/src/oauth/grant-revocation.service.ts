import { Inject, Injectable } from '@nestjs/common';
import type { KeyRecord } from '@svc/contracts';
import type { AuditActor } from '../audit/audit';
import type { KeyRow } from '../db/key-row';
import { KeyCacheService } from '../key-cache/key-cache.service';
import { toKeyRecord } from '../key-cache/key-record';
import { KeysRepository } from '../keys/keys.repository';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { GrantsRepository } from './grants.repository';

/** The audit actor of a change a grant's client made: the grant itself, from the client's address. */
export function grantActor(grantId: string, origin: string | null): AuditActor {
  return { kind: 'oauth_grant', id: grantId, clientAddress: origin };
}

/**
 * How a grant and its tokens end, whoever ends it (the owner on the Connected apps page, the
 * client at /oauth/revoke, a replayed code or refresh token): the key machinery ends the grant's
 * key, and the cached records of its access tokens are replaced at once.
 */
@Injectable()
export class GrantRevocationService {
  constructor(
    @Inject(GrantsRepository) private readonly grants: GrantsRepository,
    @Inject(KeysRepository) private readonly keys: KeysRepository,
    @Inject(KeyCacheService) private readonly cache: KeyCacheService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Ends a grant: marked revoked, its key deleted (a key change like DELETE /v1/keys: Redis,
   * the change message, the outbox), and the cached records of its live access tokens
   * replaced by deleted ones at once. Resolves with the key's hash when the key was live.
   * Each change is audited in its own transaction with `actor` (`oauth_grant.revoke` on the
   * grant, `api_key.delete` on its key); a grant or key ended already makes no entry.
   */
  async endGrant(grantId: string, accountId: string, key: KeyRow | null, reason: string, actor: AuditActor): Promise<string | null> {
    const now = new Date();
    await this.grants.revokeGrant(accountId, grantId, reason, now, actor);
    let keyHash: string | null = null;
    let record: KeyRow | null = key;
    if (key !== null && key.deletedAt === null) {
      const asOfMs = now.getTime();
      const changed = await this.keys.softDelete(accountId, 'api', key.id, { actor, action: 'api_key.delete' });
      if (changed !== null) {
        await this.cache.propagate({ keyHash: changed.row.keyHash, record: toKeyRecord(changed.row), outboxId: changed.outboxId, asOfMs });
        keyHash = changed.row.keyHash;
        record = changed.row;
      }
    }
    if (record !== null) await this.endAccessTokens(await this.grants.liveAccessTokenHashes(grantId, now), record);
    this.logger.info({ account_id: accountId, grant_id: grantId, reason }, 'oauth grant revoked');
    return keyHash;
  }

  /** Writes deleted records for access tokens and tells the gateways (best effort: the propagation bound holds without it). */
  async endAccessTokens(hashes: readonly string[], key: KeyRow): Promise<void> {
    const writtenAtMs = Date.now();
    for (const hash of hashes) {
      const record: KeyRecord = { ...toKeyRecord(key), deleted: true };
      await this.cache.writeAndPublish(hash, record, writtenAtMs).catch((error: unknown) =>
        this.logger.warn({ key_id: key.id, err: error instanceof Error ? error.message : String(error) }, 'access token record not ended in Redis; the propagation bound ends it'));
    }
  }
}
