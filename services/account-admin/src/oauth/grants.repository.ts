import { Inject, Injectable } from '@nestjs/common';
import { appendAudit } from '../audit/audit.repository';
import type { AuditActor } from '../audit/audit';
import { DatabaseRepository } from '../db/database.repository';
import { toRow } from '../db/key-row';
import type { KeyRow } from '../db/key-row';
import { clientRow } from './oauth-rows';
import type { ClientRow, GrantRow, NewToken, TokenKind, TokenWithGrant } from './oauth-rows';

/** Grants and their codes and tokens; every secret is stored as its SHA-256 only. */
@Injectable()
export class GrantsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async findToken(hash: string): Promise<TokenWithGrant | null> {
    const model = await this.db.client.oAuthToken.findUnique({ where: { hash }, include: { grant: { include: { key: true, client: true } } } });
    if (model === null) return null;
    const { key, client, ...grant } = model.grant;
    return {
      hash: model.hash,
      kind: model.kind as TokenKind,
      codeChallenge: model.codeChallenge,
      redirectUri: model.redirectUri,
      expiresAt: model.expiresAt,
      usedAt: model.usedAt,
      grant,
      key: toRow(key),
      client: clientRow(client),
    };
  }

  /** Marks a code or refresh token used, once: false when it was used before (a replay). */
  async use(hash: string, now: Date): Promise<boolean> {
    const { count } = await this.db.client.oAuthToken.updateMany({ where: { hash, usedAt: null }, data: { usedAt: now } });
    return count === 1;
  }

  async insertTokens(grantId: string, tokens: readonly NewToken[], now: Date): Promise<void> {
    await this.db.client.oAuthToken.createMany({ data: tokens.map((token) => ({ ...token, grantId, createdAt: now })) });
  }

  /** Revokes a live grant, with its audit entry, in one transaction; false (and no entry) when it was revoked already. */
  async revokeGrant(accountId: string, grantId: string, reason: string, now: Date, actor: AuditActor): Promise<boolean> {
    return this.db.client.$transaction(async (tx) => {
      const { count } = await tx.oAuthGrant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: now, revokedReason: reason } });
      if (count !== 1) return false;
      await appendAudit(tx, { accountId, actor, action: 'oauth_grant.revoke', targetId: grantId, changes: { revoked: { before: false, after: true }, revoked_reason: { before: null, after: reason } } });
      return true;
    });
  }

  /** The hashes of a grant's access tokens that have not expired (their cached records are ended at once on revocation). */
  async liveAccessTokenHashes(grantId: string, now: Date): Promise<string[]> {
    const rows = await this.db.client.oAuthToken.findMany({ where: { grantId, kind: 'access', expiresAt: { gt: now } }, select: { hash: true } });
    return rows.map((row) => row.hash);
  }

  async findGrant(accountId: string, id: string): Promise<GrantRow | null> {
    return this.db.client.oAuthGrant.findFirst({ where: { id, accountId } });
  }

  /** The account's grants, newest first, with their client and key. */
  async listGrants(accountId: string, limit: number): Promise<(GrantRow & { client: ClientRow; key: KeyRow })[]> {
    const models = await this.db.client.oAuthGrant.findMany({
      where: { accountId },
      include: { client: true, key: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return models.map(({ client, key, ...grant }) => ({ ...grant, client: clientRow(client), key: toRow(key) }));
  }
}
