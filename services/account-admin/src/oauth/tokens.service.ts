import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { OAUTH_LIFETIMES } from '@svc/contracts';
import type { KeyLookup } from '@svc/contracts';
import { generateOAuthSecret, hashSecret, isOAuthSecret } from '@svc/keys';
import { accessRecord } from './access-record';
import { grantActor, GrantRevocationService } from './grant-revocation.service';
import { GrantsRepository } from './grants.repository';
import { OAuthError } from './oauth-error';
import type { NewToken, TokenWithGrant } from './oauth-rows';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

/** RFC 7636 section 4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The token endpoint, revocation and the access tokens' lookup (docs/decisions/0029): single-use
 * codes bound to the client, the redirect URI and the PKCE challenge; rotating refresh tokens
 * whose reuse ends the grant; access tokens that resolve to the grant's key through LookupKey.
 */
@Injectable()
export class TokensService {
  constructor(
    @Inject(GrantsRepository) private readonly grants: GrantsRepository,
    @Inject(GrantRevocationService) private readonly revocation: GrantRevocationService,
  ) {}

  /**
   * POST /oauth/token (form parameters). `origin` is the caller's address, for the audit
   * entry of a grant that a replayed code or refresh token ends.
   */
  async token(form: URLSearchParams, origin: string | null): Promise<TokenResponse> {
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') return this.exchangeCode(form, origin);
    if (grantType === 'refresh_token') return this.refresh(form, origin);
    if (grantType === null) throw new OAuthError('invalid_request', 'grant_type is required');
    throw new OAuthError('unsupported_grant_type', 'grant_type must be "authorization_code" or "refresh_token"');
  }

  /**
   * POST /oauth/revoke (RFC 7009): 200 whatever the token was; a refresh token ends its whole
   * grant (audited with the grant as the actor, from `origin`). An access token revoked alone
   * ends that token only: a credential's end, like a sign-out, not a change of the grant.
   */
  async revoke(form: URLSearchParams, origin: string | null): Promise<void> {
    const token = form.get('token');
    if (token === null || token === '') throw new OAuthError('invalid_request', 'token is required');
    const clientId = form.get('client_id');
    const kind = isOAuthSecret('refresh', token) ? 'refresh' : isOAuthSecret('access', token) ? 'access' : null;
    if (kind === null) return;
    const row = await this.grants.findToken(hashSecret(token));
    if (row === null || row.kind !== kind) return;
    // A public client proves nothing but its id; a token presented with another client's id is left alone.
    if (clientId !== null && clientId !== row.client.id) return;
    if (kind === 'refresh') {
      await this.revocation.endGrant(row.grant.id, row.grant.accountId, row.key, 'revoked by the client', grantActor(row.grant.id, origin));
    } else {
      await this.grants.use(row.hash, new Date());
      await this.revocation.endAccessTokens([row.hash], row.key);
    }
  }

  /**
   * LookupKey for a hash that is no key: a live access token resolves to its grant's key
   * record, expiring with the token; a used, revoked or expired one to a deleted record.
   * Null when the hash is no access token either.
   */
  async lookupAccessToken(hash: string): Promise<KeyLookup | null> {
    const row = await this.grants.findToken(hash);
    if (row === null || row.kind !== 'access') return null;
    return { found: true, record: accessRecord(row) };
  }

  private async exchangeCode(form: URLSearchParams, origin: string | null): Promise<TokenResponse> {
    const code = form.get('code');
    const clientId = form.get('client_id');
    const redirectUri = form.get('redirect_uri');
    const verifier = form.get('code_verifier');
    if (code === null || clientId === null) throw new OAuthError('invalid_request', 'code and client_id are required');
    const row = await this.tokenFor(clientId, 'code', code, 'the code');
    const now = new Date();
    if (!(await this.grants.use(row.hash, now))) {
      // RFC 6749 section 4.1.2: a code used twice is refused and what it gave is revoked.
      await this.revocation.endGrant(row.grant.id, row.grant.accountId, row.key, 'authorization code reused', grantActor(row.grant.id, origin));
      throw new OAuthError('invalid_grant', 'the code was already used; the grant it made is revoked');
    }
    if (row.expiresAt.getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'the code has expired');
    if (redirectUri !== row.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
    if (verifier === null) throw new OAuthError('invalid_grant', 'code_verifier is required (PKCE)');
    if (!VERIFIER.test(verifier) || row.codeChallenge === null || !sameText(s256(verifier), row.codeChallenge)) {
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    }
    usableGrant(row);
    return this.issue(row, now);
  }

  private async refresh(form: URLSearchParams, origin: string | null): Promise<TokenResponse> {
    const token = form.get('refresh_token');
    const clientId = form.get('client_id');
    if (token === null || clientId === null) throw new OAuthError('invalid_request', 'refresh_token and client_id are required');
    const row = await this.tokenFor(clientId, 'refresh', token, 'the refresh token');
    const now = new Date();
    usableGrant(row);
    if (row.expiresAt.getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'the refresh token has expired');
    if (!(await this.grants.use(row.hash, now))) {
      // A rotated refresh token presented again: one of the two holders is not the client. End the family (the grant).
      await this.revocation.endGrant(row.grant.id, row.grant.accountId, row.key, 'refresh token reused after rotation', grantActor(row.grant.id, origin));
      throw new OAuthError('invalid_grant', 'the refresh token was already used; the grant is revoked');
    }
    return this.issue(row, now);
  }

  /**
   * The stored token `secret` names, of `kind` and issued to `clientId`; else invalid_grant,
   * `what` naming the token in the message.
   */
  private async tokenFor(clientId: string, kind: 'code' | 'refresh', secret: string, what: string): Promise<TokenWithGrant> {
    if (!isOAuthSecret(kind, secret)) throw new OAuthError('invalid_grant', `${what} is not valid`);
    const row = await this.grants.findToken(hashSecret(secret));
    if (row === null || row.kind !== kind) throw new OAuthError('invalid_grant', `${what} is not valid`);
    if (row.client.id !== clientId) throw new OAuthError('invalid_grant', `${what} was issued to another client`);
    return row;
  }

  private async issue(row: TokenWithGrant, now: Date): Promise<TokenResponse> {
    const access = generateOAuthSecret('access');
    const refresh = generateOAuthSecret('refresh');
    const nowMs = now.getTime();
    const tokens: NewToken[] = [
      { hash: hashSecret(access), kind: 'access', expiresAt: new Date(nowMs + OAUTH_LIFETIMES.accessTokenSeconds * 1000) },
      { hash: hashSecret(refresh), kind: 'refresh', expiresAt: new Date(nowMs + OAUTH_LIFETIMES.refreshTokenSeconds * 1000) },
    ];
    await this.grants.insertTokens(row.grant.id, tokens, now);
    const keyExpiry = row.key.expiresAt === null ? Number.POSITIVE_INFINITY : row.key.expiresAt.getTime();
    const expiresIn = Math.max(1, Math.floor((Math.min(keyExpiry, nowMs + OAUTH_LIFETIMES.accessTokenSeconds * 1000) - nowMs) / 1000));
    return { access_token: access, token_type: 'Bearer', expires_in: expiresIn, refresh_token: refresh };
  }
}

function usableGrant(row: TokenWithGrant): void {
  if (row.grant.revokedAt !== null || row.key.deletedAt !== null) throw new OAuthError('invalid_grant', 'the grant was revoked');
  if (row.key.expiresAt !== null && row.key.expiresAt.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'the grant has expired');
}
