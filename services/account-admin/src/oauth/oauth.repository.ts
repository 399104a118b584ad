import { Inject, Injectable } from '@nestjs/common';
import { created } from '../audit/audit';
import { appendAudit } from '../audit/audit.repository';
import type { AuditActor } from '../audit/audit';
import { DatabaseRepository } from '../db/database.repository';
import { toRow } from '../db/key-row';
import type { KeyRow } from '../db/key-row';
import { insertKey } from '../keys/keys.repository';
import type { ChangedKey, NewKey } from '../keys/keys.repository';
import { apiKeyAuditFields } from '../keys/keys.service';

export type ClientKind = 'dynamic' | 'metadata_document';
export type TokenKind = 'code' | 'access' | 'refresh';

export interface ClientRow {
  id: string;
  kind: ClientKind;
  name: string;
  redirectUris: string[];
  fetchedAt: Date | null;
}

export interface RequestRow {
  id: string;
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  expiresAt: Date;
  decidedAt: Date | null;
}

export interface GrantRow {
  id: string;
  accountId: string;
  clientId: string;
  keyId: string;
  redirectUri: string;
  createdAt: Date;
  revokedAt: Date | null;
  revokedReason: string | null;
}

/** A token (or code) row with its grant and the grant's key. */
export interface TokenWithGrant {
  hash: string;
  kind: TokenKind;
  codeChallenge: string | null;
  redirectUri: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  grant: GrantRow;
  key: KeyRow;
  client: ClientRow;
}

export interface NewToken {
  hash: string;
  kind: TokenKind;
  expiresAt: Date;
  codeChallenge?: string;
  redirectUri?: string;
}

/** A grant's audited fields: its client and where it sends the code, and its key (never a code, a token or a hash). */
export function grantAuditFields(grant: Pick<GrantRow, 'keyId' | 'redirectUri'>, client: Pick<ClientRow, 'id' | 'name'>): Record<string, string> {
  return { client_id: client.id, client_name: client.name, redirect_uri: grant.redirectUri, key_id: grant.keyId };
}

function clientRow(model: { id: string; kind: string; name: string; redirectUris: string[]; fetchedAt: Date | null }): ClientRow {
  return { id: model.id, kind: model.kind as ClientKind, name: model.name, redirectUris: model.redirectUris, fetchedAt: model.fetchedAt };
}

/** The OAuth tables (account-admin's own); every secret is stored as its SHA-256 only. */
@Injectable()
export class OAuthRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async createClient(client: { id: string; kind: ClientKind; name: string; redirectUris: string[]; fetchedAt: Date | null }): Promise<ClientRow> {
    return clientRow(await this.db.client.oAuthClient.create({ data: client }));
  }

  /** A metadata-document client, inserted or refreshed from its latest fetch. */
  async upsertDocumentClient(id: string, name: string, redirectUris: string[], fetchedAt: Date): Promise<ClientRow> {
    const model = await this.db.client.oAuthClient.upsert({
      where: { id },
      create: { id, kind: 'metadata_document', name, redirectUris, fetchedAt },
      update: { name, redirectUris, fetchedAt },
    });
    return clientRow(model);
  }

  async findClient(id: string): Promise<ClientRow | null> {
    const model = await this.db.client.oAuthClient.findUnique({ where: { id } });
    return model === null ? null : clientRow(model);
  }

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
