import type { KeyRow } from '../db/key-row';

/** The rows of the OAuth tables (account-admin's own), as the repositories answer them. */

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

export function clientRow(model: { id: string; kind: string; name: string; redirectUris: string[]; fetchedAt: Date | null }): ClientRow {
  return { id: model.id, kind: model.kind as ClientKind, name: model.name, redirectUris: model.redirectUris, fetchedAt: model.fetchedAt };
}
