import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { LIMITS, OAUTH_LIFETIMES, OAUTH_LIMITS, OAUTH_PATHS } from '@svc/contracts';
import type { ConnectedAppView as ConnectedApp, ConsentView, KeyLookup, KeyRecord, LimitReset } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId, newId } from '@svc/ids';
import { generateOAuthSecret, generateSecret, hashSecret, isOAuthSecret, labelOf } from '@svc/keys';
import type { AuditActor } from '../audit/audit';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { KeyCacheService } from '../key-cache/key-cache.service';
import { KeysRepository } from '../keys/keys.repository';
import type { KeyRow } from '../db/key-row';
import { toKeyRecord } from '../key-cache/key-record';
import { KeysService } from '../keys/keys.service';
import type { KeyView } from '../keys/keys.service';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { checkRedirectUris, ClientMetadataError, ClientMetadataFetcher, isClientIdUrl } from './client-metadata';
import { OAuthRepository } from './oauth.repository';
import type { ClientRow, NewToken, TokenWithGrant } from './oauth.repository';

/** An OAuth error response (RFC 6749 section 5.2; RFC 7591 section 3.2.2): its own shape, not the platform's. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }

  body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** Where GET /oauth/authorize sends the browser: the consent page, the client with an error, or nowhere (an error page). */
export type AuthorizeOutcome =
  | { kind: 'consent'; location: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'refused'; error: OAuthError };

export interface ApproveInput {
  limitMicros: number;
  limitReset: LimitReset | null;
  expiresAt: Date | null;
}

/** An app connected by OAuth, with its key as GET /v1/keys shows it. */
export type ConnectedAppView = ConnectedApp<KeyView>;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

const S256 = /^[A-Za-z0-9_-]{43}$/;
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
 * The authorization server of the connector URL (docs/decisions/0029-oauth-for-connectors.md):
 * client registration (dynamic, RFC 7591, and Client ID Metadata Documents), the
 * authorization code flow with PKCE S256, the owner's consent in the dashboard, rotating
 * refresh tokens and revocation. Each approval makes a grant and a child API key of the
 * account; the grant's access tokens resolve to that key through LookupKey, so limits,
 * charges and key changes are the key machinery's.
 */
@Injectable()
export class OAuthService implements OnApplicationShutdown {
  private readonly issuer: string;
  private readonly resource: string;
  private readonly fetcher: ClientMetadataFetcher;

  constructor(
    @Inject(OAuthRepository) private readonly repo: OAuthRepository,
    @Inject(KeysRepository) private readonly keys: KeysRepository,
    @Inject(KeysService) private readonly keyViews: KeysService,
    @Inject(KeyCacheService) private readonly cache: KeyCacheService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.issuer = config.PUBLIC_BASE_URL.replace(/\/+$/, '');
    this.resource = this.issuer + OAUTH_PATHS.resource;
    this.fetcher = new ClientMetadataFetcher(config.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.fetcher.close();
  }

  /** RFC 8414 authorization server metadata. */
  serverMetadata(): Record<string, unknown> {
    return {
      issuer: this.issuer,
      authorization_endpoint: this.issuer + OAUTH_PATHS.authorize,
      token_endpoint: this.issuer + OAUTH_PATHS.token,
      registration_endpoint: this.issuer + OAUTH_PATHS.register,
      revocation_endpoint: this.issuer + OAUTH_PATHS.revoke,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: [],
      service_documentation: `${this.issuer}/dashboard`,
    };
  }

  /** RFC 7591 dynamic registration of a public client; unknown metadata is ignored (section 2). */
  async register(body: unknown): Promise<Record<string, unknown>> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object');
    const doc = body as Record<string, unknown>;
    let redirectUris: string[];
    try {
      redirectUris = checkRedirectUris(doc.redirect_uris, this.config.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE);
    } catch (error) {
      throw new OAuthError('invalid_redirect_uri', error instanceof Error ? error.message : 'bad redirect_uris');
    }
    const grantTypes = doc.grant_types;
    if (grantTypes !== undefined && (!Array.isArray(grantTypes) || grantTypes.some((t) => t !== 'authorization_code' && t !== 'refresh_token'))) {
      throw new OAuthError('invalid_client_metadata', 'grant_types may hold only "authorization_code" and "refresh_token"');
    }
    const responseTypes = doc.response_types;
    if (responseTypes !== undefined && (!Array.isArray(responseTypes) || responseTypes.some((t) => t !== 'code'))) {
      throw new OAuthError('invalid_client_metadata', 'response_types may hold only "code"');
    }
    const rawName = typeof doc.client_name === 'string' ? doc.client_name.trim() : '';
    const name = rawName === '' ? new URL(redirectUris[0] as string).host || 'OAuth client' : rawName.slice(0, OAUTH_LIMITS.clientName.max);
    const now = new Date();
    const client = await this.repo.createClient({ id: newId('oauthClient'), kind: 'dynamic', name, redirectUris, fetchedAt: null });
    // Public clients only: whatever authentication method was asked for, the answer says "none" (RFC 7591 section 3.2.1 lets the server replace it).
    return {
      client_id: client.id,
      client_id_issued_at: Math.floor(now.getTime() / 1000),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /**
   * GET /oauth/authorize. An unknown client or a redirect URI not registered exactly is
   * refused here (never redirected: RFC 6749 section 4.1.2.1); every other problem goes back
   * to the client's redirect URI with `error` and the `state`.
   */
  async authorize(query: Record<string, string | undefined>): Promise<AuthorizeOutcome> {
    const clientId = query.client_id;
    if (clientId === undefined || clientId === '' || clientId.length > OAUTH_LIMITS.uri.max) {
      return { kind: 'refused', error: new OAuthError('invalid_request', 'client_id is required') };
    }
    let client: ClientRow | null;
    try {
      client = await this.client(clientId);
    } catch (error) {
      if (error instanceof ClientMetadataError) return { kind: 'refused', error: new OAuthError('invalid_client', `client_id: ${error.message}`) };
      throw error;
    }
    if (client === null) return { kind: 'refused', error: new OAuthError('invalid_client', 'unknown client_id') };
    // Always required (so the token request, which must repeat it, has something to match).
    const redirectUri = query.redirect_uri;
    if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
      return { kind: 'refused', error: new OAuthError('invalid_request', 'redirect_uri is not one of the client\'s registered redirect URIs (compared exactly)') };
    }
    const state = query.state;
    const back = (error: string, description: string): AuthorizeOutcome => ({ kind: 'redirect', location: this.redirectWith(redirectUri, { error, error_description: description, state }) });
    if (state !== undefined && state.length > OAUTH_LIMITS.state.max) return back('invalid_request', `state must be at most ${OAUTH_LIMITS.state.max} characters`);
    if (query.response_type !== 'code') return back('unsupported_response_type', 'response_type must be "code"');
    if (query.code_challenge === undefined) return back('invalid_request', 'code_challenge is required (PKCE with S256)');
    if (query.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be "S256"');
    if (!S256.test(query.code_challenge)) return back('invalid_request', 'code_challenge must be 43 base64url characters (the SHA-256 of the verifier)');
    if (query.resource !== undefined && query.resource !== this.resource) return back('invalid_target', `resource must be ${this.resource}`);
    const id = newId('oauthRequest');
    const now = Date.now();
    await this.repo.createRequest({
      id,
      clientId: client.id,
      redirectUri,
      state: state ?? null,
      codeChallenge: query.code_challenge,
      expiresAt: new Date(now + OAUTH_LIFETIMES.requestSeconds * 1000),
    });
    return { kind: 'consent', location: `${this.issuer}${OAUTH_PATHS.consent}?request=${id}` };
  }

  /** What the consent page shows; a request decided or expired is 404. */
  async consentView(requestId: string): Promise<ConsentView> {
    const request = await this.pendingRequest(requestId);
    return {
      id: request.id,
      client_id: request.client.id,
      client_name: request.client.name,
      redirect_host: hostOf(request.redirectUri),
      client_kind: request.client.kind,
      expires_at: request.expiresAt.toISOString(),
    };
  }

  /**
   * The owner approves for the session's account: the grant's key (named after the client,
   * with the limit and expiry chosen), the grant and a code, in one transaction; then the key
   * reaches Redis. Answers where the browser goes next (the client's redirect URI with the code).
   */
  async approve(accountId: string, requestId: string, input: ApproveInput, actor: AuditActor): Promise<{ redirect_to: string; grant_id: string; key_id: string; keyHash: string }> {
    const request = await this.pendingRequest(requestId);
    const now = new Date();
    const unusable = generateSecret('api');
    const code = generateOAuthSecret('code');
    const asOfMs = now.getTime();
    const approved = await this.repo.approve(
      request.id,
      now,
      {
        id: newId('apiKey'),
        accountId,
        kind: 'api',
        name: request.client.name.slice(0, LIMITS.keyName.max),
        // The grant's key is used only through the grant's tokens: its own secret is never shown and is discarded here.
        keyHash: hashSecret(unusable),
        label: labelOf(unusable),
        limitMicros: input.limitMicros,
        limitReset: input.limitReset,
        expiresAt: input.expiresAt,
        disabled: false,
      },
      { id: newId('oauthGrant'), client: request.client, redirectUri: request.redirectUri },
      { hash: hashSecret(code), kind: 'code', expiresAt: new Date(asOfMs + OAUTH_LIFETIMES.codeSeconds * 1000), codeChallenge: request.codeChallenge, redirectUri: request.redirectUri },
      actor,
    );
    if (approved === null) throw requestGone();
    const { changed, grant } = approved;
    await this.cache.propagate({ keyHash: changed.row.keyHash, record: toKeyRecord(changed.row), outboxId: changed.outboxId, asOfMs });
    this.logger.info({ account_id: accountId, grant_id: grant.id, key_id: changed.row.id, client_id: request.client.id }, 'oauth grant approved');
    return {
      redirect_to: this.redirectWith(request.redirectUri, { code, state: request.state ?? undefined, iss: this.issuer }),
      grant_id: grant.id,
      key_id: changed.row.id,
      keyHash: changed.row.keyHash,
    };
  }

  async deny(requestId: string): Promise<{ redirect_to: string }> {
    const request = await this.pendingRequest(requestId);
    if (!(await this.repo.decide(request.id, new Date()))) throw requestGone();
    return { redirect_to: this.redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'the owner denied the request', state: request.state ?? undefined, iss: this.issuer }) };
  }

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
    const row = await this.repo.findToken(hashSecret(token));
    if (row === null || row.kind !== kind) return;
    // A public client proves nothing but its id; a token presented with another client's id is left alone.
    if (clientId !== null && clientId !== row.client.id) return;
    if (kind === 'refresh') {
      await this.endGrant(row.grant.id, row.grant.accountId, row.key, 'revoked by the client', grantActor(row.grant.id, origin));
    } else {
      await this.repo.use(row.hash, new Date());
      await this.endAccessTokens([row.hash], row.key);
    }
  }

  /**
   * LookupKey for a hash that is no key: a live access token resolves to its grant's key
   * record, expiring with the token; a used, revoked or expired one to a deleted record.
   * Null when the hash is no access token either.
   */
  async lookupAccessToken(hash: string): Promise<KeyLookup | null> {
    const row = await this.repo.findToken(hash);
    if (row === null || row.kind !== 'access') return null;
    return { found: true, record: accessRecord(row) };
  }

  /** The Connected apps page: the account's grants with their key (limit and spend). */
  async listConnectedApps(accountId: string): Promise<{ data: ConnectedAppView[] }> {
    const grants = await this.repo.listGrants(accountId, 200);
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
  async revokeConnectedApp(accountId: string, grantId: string, actor: AuditActor): Promise<{ id: string; revoked: true; keyHash: string | null }> {
    const grant = isId('oauthGrant', grantId) ? await this.repo.findGrant(accountId, grantId) : null;
    if (grant === null) throw new AppError('not_found', 'no such connected app in this account');
    const key = await this.keys.findLive(accountId, 'api', grant.keyId);
    const keyHash = await this.endGrant(grant.id, accountId, key, 'revoked by the owner', actor);
    return { id: grant.id, revoked: true, keyHash };
  }

  private async exchangeCode(form: URLSearchParams, origin: string | null): Promise<TokenResponse> {
    const code = form.get('code');
    const clientId = form.get('client_id');
    const redirectUri = form.get('redirect_uri');
    const verifier = form.get('code_verifier');
    if (code === null || clientId === null) throw new OAuthError('invalid_request', 'code and client_id are required');
    const row = await this.tokenFor(clientId, 'code', code, 'the code');
    const now = new Date();
    if (!(await this.repo.use(row.hash, now))) {
      // RFC 6749 section 4.1.2: a code used twice is refused and what it gave is revoked.
      await this.endGrant(row.grant.id, row.grant.accountId, row.key, 'authorization code reused', grantActor(row.grant.id, origin));
      throw new OAuthError('invalid_grant', 'the code was already used; the grant it made is revoked');
    }
    if (row.expiresAt.getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'the code has expired');
    if (redirectUri !== row.redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
    if (verifier === null) throw new OAuthError('invalid_grant', 'code_verifier is required (PKCE)');
    if (!VERIFIER.test(verifier) || row.codeChallenge === null || !sameText(s256(verifier), row.codeChallenge)) {
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    }
    this.usableGrant(row);
    return this.issue(row, now);
  }

  private async refresh(form: URLSearchParams, origin: string | null): Promise<TokenResponse> {
    const token = form.get('refresh_token');
    const clientId = form.get('client_id');
    if (token === null || clientId === null) throw new OAuthError('invalid_request', 'refresh_token and client_id are required');
    const row = await this.tokenFor(clientId, 'refresh', token, 'the refresh token');
    const now = new Date();
    this.usableGrant(row);
    if (row.expiresAt.getTime() <= now.getTime()) throw new OAuthError('invalid_grant', 'the refresh token has expired');
    if (!(await this.repo.use(row.hash, now))) {
      // A rotated refresh token presented again: one of the two holders is not the client. End the family (the grant).
      await this.endGrant(row.grant.id, row.grant.accountId, row.key, 'refresh token reused after rotation', grantActor(row.grant.id, origin));
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
    const row = await this.repo.findToken(hashSecret(secret));
    if (row === null || row.kind !== kind) throw new OAuthError('invalid_grant', `${what} is not valid`);
    if (row.client.id !== clientId) throw new OAuthError('invalid_grant', `${what} was issued to another client`);
    return row;
  }

  private usableGrant(row: TokenWithGrant): void {
    if (row.grant.revokedAt !== null || row.key.deletedAt !== null) throw new OAuthError('invalid_grant', 'the grant was revoked');
    if (row.key.expiresAt !== null && row.key.expiresAt.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'the grant has expired');
  }

  private async issue(row: TokenWithGrant, now: Date): Promise<TokenResponse> {
    const access = generateOAuthSecret('access');
    const refresh = generateOAuthSecret('refresh');
    const nowMs = now.getTime();
    const tokens: NewToken[] = [
      { hash: hashSecret(access), kind: 'access', expiresAt: new Date(nowMs + OAUTH_LIFETIMES.accessTokenSeconds * 1000) },
      { hash: hashSecret(refresh), kind: 'refresh', expiresAt: new Date(nowMs + OAUTH_LIFETIMES.refreshTokenSeconds * 1000) },
    ];
    await this.repo.insertTokens(row.grant.id, tokens, now);
    const keyExpiry = row.key.expiresAt === null ? Number.POSITIVE_INFINITY : row.key.expiresAt.getTime();
    const expiresIn = Math.max(1, Math.floor((Math.min(keyExpiry, nowMs + OAUTH_LIFETIMES.accessTokenSeconds * 1000) - nowMs) / 1000));
    return { access_token: access, token_type: 'Bearer', expires_in: expiresIn, refresh_token: refresh };
  }

  /**
   * Ends a grant: marked revoked, its key deleted (a key change like DELETE /v1/keys: Redis,
   * the change message, the outbox), and the cached records of its live access tokens
   * replaced by deleted ones at once. Resolves with the key's hash when the key was live.
   * Each change is audited in its own transaction with `actor` (`oauth_grant.revoke` on the
   * grant, `api_key.delete` on its key); a grant or key ended already makes no entry.
   */
  private async endGrant(grantId: string, accountId: string, key: KeyRow | null, reason: string, actor: AuditActor): Promise<string | null> {
    const now = new Date();
    await this.repo.revokeGrant(accountId, grantId, reason, now, actor);
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
    if (record !== null) await this.endAccessTokens(await this.repo.liveAccessTokenHashes(grantId, now), record);
    this.logger.info({ account_id: accountId, grant_id: grantId, reason }, 'oauth grant revoked');
    return keyHash;
  }

  /** Writes deleted records for access tokens and tells the gateways (best effort: the propagation bound holds without it). */
  private async endAccessTokens(hashes: readonly string[], key: KeyRow): Promise<void> {
    const writtenAtMs = Date.now();
    for (const hash of hashes) {
      const record: KeyRecord = { ...toKeyRecord(key), deleted: true };
      await this.cache.writeAndPublish(hash, record, writtenAtMs).catch((error: unknown) =>
        this.logger.warn({ key_id: key.id, err: error instanceof Error ? error.message : String(error) }, 'access token record not ended in Redis; the propagation bound ends it'));
    }
  }

  private async pendingRequest(requestId: string): Promise<NonNullable<Awaited<ReturnType<OAuthRepository['findRequest']>>>> {
    const request = isId('oauthRequest', requestId) ? await this.repo.findRequest(requestId) : null;
    if (request === null || request.decidedAt !== null || request.expiresAt.getTime() <= Date.now()) throw requestGone();
    return request;
  }

  /** A registered client, or a metadata-document client fetched (again) from its URL. */
  private async client(clientId: string): Promise<ClientRow | null> {
    if (isId('oauthClient', clientId)) return this.repo.findClient(clientId);
    if (!isClientIdUrl(clientId, this.config.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE)) return null;
    const metadata = await this.fetcher.fetch(clientId);
    return this.repo.upsertDocumentClient(metadata.clientId, metadata.name, metadata.redirectUris, new Date());
  }

  private redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
    return url.toString();
  }
}

/** The audit actor of a change a grant's client made: the grant itself, from the client's address. */
function grantActor(grantId: string, origin: string | null): AuditActor {
  return { kind: 'oauth_grant', id: grantId, clientAddress: origin };
}

/** The key record an access token resolves to: its grant's key, ending when the token does. */
export function accessRecord(row: TokenWithGrant): KeyRecord {
  const key = toKeyRecord(row.key);
  const tokenEnd = row.expiresAt.getTime();
  return {
    ...key,
    expiresAtMs: key.expiresAtMs === null ? tokenEnd : Math.min(key.expiresAtMs, tokenEnd),
    deleted: key.deleted || row.grant.revokedAt !== null || row.usedAt !== null,
  };
}

function hostOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host === '' ? url.protocol.replace(/:$/, '') : url.host;
  } catch {
    return uri;
  }
}

function requestGone(): AppError {
  return new AppError('not_found', 'this authorization request was already decided or has expired; start again from the app');
}
