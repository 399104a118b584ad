import { Inject, Injectable } from '@nestjs/common';
import { created } from '../audit/audit';
import { appendAudit } from '../audit/audit.repository';
import type { AuditActor } from '../audit/audit';
import { DatabaseRepository } from '../db/database.repository';
import { insertKey } from '../keys/keys.repository';
import type { ChangedKey, NewKey } from '../keys/keys.repository';
import { apiKeyAuditFields } from '../keys/keys.service';
import { clientRow, grantAuditFields } from './oauth-rows';
import type { ClientRow, GrantRow, NewToken, RequestRow } from './oauth-rows';

/** Authorization requests waiting for the owner's consent, and the consent's one transaction. */
@Injectable()
export class AuthorizationRequestsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async createRequest(request: Omit<RequestRow, 'decidedAt'>): Promise<void> {
    await this.db.client.oAuthRequest.create({ data: request });
  }

  async findRequest(id: string): Promise<(RequestRow & { client: ClientRow }) | null> {
    const model = await this.db.client.oAuthRequest.findUnique({ where: { id }, include: { client: true } });
    if (model === null) return null;
    const { client, ...request } = model;
    return { ...request, client: clientRow(client) };
  }

  /** Marks a pending, unexpired request decided; false when it was decided already or has expired. */
  async decide(id: string, now: Date): Promise<boolean> {
    const { count } = await this.db.client.oAuthRequest.updateMany({ where: { id, decidedAt: null, expiresAt: { gt: now } }, data: { decidedAt: now } });
    return count === 1;
  }

  /**
   * The approval, in one transaction: the request decided (once, unexpired), the grant's API
   * key with its outbox row, the grant and its authorization code, and the audit entries of
   * the key and the grant (the owner's session is the actor). Null when the request was
   * decided already or has expired.
   */
  async approve(
    requestId: string,
    now: Date,
    key: NewKey,
    grant: { id: string; client: ClientRow; redirectUri: string },
    code: NewToken,
    actor: AuditActor,
  ): Promise<{ changed: ChangedKey; grant: GrantRow } | null> {
    return this.db.client.$transaction(async (tx) => {
      const { count } = await tx.oAuthRequest.updateMany({ where: { id: requestId, decidedAt: null, expiresAt: { gt: now } }, data: { decidedAt: now } });
      if (count !== 1) return null;
      const changed = await insertKey(tx, key);
      const row = await tx.oAuthGrant.create({ data: { id: grant.id, accountId: key.accountId, clientId: grant.client.id, keyId: changed.row.id, redirectUri: grant.redirectUri, createdAt: now } });
      await tx.oAuthToken.create({ data: { ...code, grantId: row.id, createdAt: now } });
      await appendAudit(tx, { accountId: key.accountId, actor, action: 'api_key.create', targetId: changed.row.id, changes: created(apiKeyAuditFields(changed.row)) });
      await appendAudit(tx, { accountId: key.accountId, actor, action: 'oauth_grant.create', targetId: row.id, changes: created(grantAuditFields(row, grant.client)) });
      return { changed, grant: row };
    });
  }
}
