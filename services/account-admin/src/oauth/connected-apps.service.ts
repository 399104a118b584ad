import { Inject, Injectable } from '@nestjs/common';
import type { ConnectedAppView as ConnectedApp } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import type { AuditActor } from '../audit/audit';
import { KeysRepository } from '../keys/keys.repository';
import { KeysService } from '../keys/keys.service';
import type { KeyView } from '../keys/keys.service';
import { GrantRevocationService } from './grant-revocation.service';
import { GrantsRepository } from './grants.repository';
import { hostOf } from './issuer';

/** An app connected by OAuth, with its key as GET /v1/keys shows it. */
export type ConnectedAppView = ConnectedApp<KeyView>;

/** The Connected apps page: the account's grants with their keys, and the owner ending one. */
@Injectable()
export class ConnectedAppsService {
  constructor(
    @Inject(GrantsRepository) private readonly grants: GrantsRepository,
    @Inject(KeysRepository) private readonly keys: KeysRepository,
    @Inject(KeysService) private readonly keyViews: KeysService,
    @Inject(GrantRevocationService) private readonly revocation: GrantRevocationService,
  ) {}

  /** The account's grants with their key (limit and spend). */
  async list(accountId: string): Promise<{ data: ConnectedAppView[] }> {
    const grants = await this.grants.listGrants(accountId, 200);
    const liveKeys = grants.filter((grant) => grant.key.deletedAt === null).map((grant) => grant.key);
    const views = new Map((await this.keyViews.views(liveKeys)).map((view) => [view.id, view]));
    return {
      data: grants.map((grant) => ({
        id: grant.id,
        client_id: grant.client.id,
        client_name: grant.client.name,
        redirect_host: hostOf(grant.redirectUri),
        created_at: grant.createdAt.toISOString(),
        revoked_at: grant.revokedAt?.toISOString() ?? (grant.key.deletedAt === null ? null : grant.key.deletedAt.toISOString()),
        revoked_reason: grant.revokedReason ?? (grant.key.deletedAt === null ? null : 'the key was deleted'),
        key: views.get(grant.keyId) ?? null,
        key_id: grant.keyId,
      })),
    };
  }

  /** The owner ends a grant: its key deleted (the key machinery ends its use within the propagation bound), its tokens ended at once. */
  async revoke(accountId: string, grantId: string, actor: AuditActor): Promise<{ id: string; revoked: true; keyHash: string | null }> {
    const grant = isId('oauthGrant', grantId) ? await this.grants.findGrant(accountId, grantId) : null;
    if (grant === null) throw new AppError('not_found', 'no such connected app in this account');
    const key = await this.keys.findLive(accountId, 'api', grant.keyId);
    const keyHash = await this.revocation.endGrant(grant.id, accountId, key, 'revoked by the owner', actor);
    return { id: grant.id, revoked: true, keyHash };
  }
}
