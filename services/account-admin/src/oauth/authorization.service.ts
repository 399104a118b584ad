import { Inject, Injectable } from '@nestjs/common';
import { LIMITS, OAUTH_LIFETIMES, OAUTH_LIMITS, OAUTH_PATHS } from '@svc/contracts';
import type { ConsentView, LimitReset } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId, newId } from '@svc/ids';
import { generateOAuthSecret, generateSecret, hashSecret, labelOf } from '@svc/keys';
import type { AuditActor } from '../audit/audit';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { KeyCacheService } from '../key-cache/key-cache.service';
import { toKeyRecord } from '../key-cache/key-record';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { AuthorizationRequestsRepository } from './authorization-requests.repository';
import { ClientRegistrationService } from './client-registration.service';
import { hostOf, issuerOf, redirectWith } from './issuer';
import type { Issuer } from './issuer';
import { OAuthError } from './oauth-error';
import type { ClientRow, RequestRow } from './oauth-rows';

/**
 * Where GET /oauth/authorize sends the browser: to the platform's consent page, or nowhere (the
 * platform's error page). Never to the client: before the owner has acted, its redirect URI is
 * not trusted (RFC 9700 section 4.11.2; docs/decisions/0046).
 */
export type AuthorizeOutcome =
  | { kind: 'consent'; location: string }
  | { kind: 'refused'; error: OAuthError };

export interface ApproveInput {
  limitMicros: number;
  limitReset: LimitReset | null;
  expiresAt: Date | null;
}

export interface Approval {
  redirect_to: string;
  grant_id: string;
  key_id: string;
  keyHash: string;
}

const S256 = /^[A-Za-z0-9_-]{43}$/;

/**
 * The authorization endpoint and the owner's consent (docs/decisions/0029): a valid request is
 * stored and the browser sent to the dashboard's consent page; the signed-in owner approves
 * (the grant's child API key, the grant and a code, in one transaction) or denies, and only
 * then is the browser sent back to the client.
 */
@Injectable()
export class AuthorizationService {
  private readonly issuer: Issuer;

  constructor(
    @Inject(ClientRegistrationService) private readonly clients: ClientRegistrationService,
    @Inject(AuthorizationRequestsRepository) private readonly requests: AuthorizationRequestsRepository,
    @Inject(KeyCacheService) private readonly cache: KeyCacheService,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.issuer = issuerOf(config.PUBLIC_BASE_URL);
  }

  /** RFC 8414 authorization server metadata. */
  serverMetadata(): Record<string, unknown> {
    const { issuer } = this.issuer;
    return {
      issuer,
      authorization_endpoint: issuer + OAUTH_PATHS.authorize,
      token_endpoint: issuer + OAUTH_PATHS.token,
      registration_endpoint: issuer + OAUTH_PATHS.register,
      revocation_endpoint: issuer + OAUTH_PATHS.revoke,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      scopes_supported: [],
      service_documentation: `${issuer}/dashboard`,
    };
  }

  /**
   * GET /oauth/authorize. Every problem is refused here, on the platform's own page: an
   * unknown client or a redirect URI not registered exactly (RFC 6749 section 4.1.2.1), and
   * also a bad `response_type`, PKCE missing or not S256, a `state` too long or another
   * `resource`, which RFC 6749 would send back to the redirect URI: anyone can register one,
   * so it is not trusted before the owner has seen the request (RFC 9700 section 4.11.2).
   */
  async authorize(query: Record<string, string | undefined>): Promise<AuthorizeOutcome> {
    const clientId = query.client_id;
    if (clientId === undefined || clientId === '' || clientId.length > OAUTH_LIMITS.uri.max) {
      return refused('invalid_request', 'client_id is required');
    }
    // The parameters first: a request refused for them costs no client lookup and no document fetch.
    const state = query.state;
    if (state !== undefined && state.length > OAUTH_LIMITS.state.max) return refused('invalid_request', `state must be at most ${OAUTH_LIMITS.state.max} characters`);
    if (query.response_type !== 'code') return refused('unsupported_response_type', 'response_type must be "code"');
    const challenge = query.code_challenge;
    if (challenge === undefined) return refused('invalid_request', 'code_challenge is required (PKCE with S256)');
    if (query.code_challenge_method !== 'S256') return refused('invalid_request', 'code_challenge_method must be "S256"');
    if (!S256.test(challenge)) return refused('invalid_request', 'code_challenge must be 43 base64url characters (the SHA-256 of the verifier)');
    if (query.resource !== undefined && query.resource !== this.issuer.resource) return refused('invalid_target', `resource must be ${this.issuer.resource}`);
    let client: ClientRow | null;
    try {
      client = await this.clients.resolve(clientId);
    } catch (error) {
      if (error instanceof OAuthError) return { kind: 'refused', error };
      throw error;
    }
    if (client === null) return refused('invalid_client', 'unknown client_id');
    // Always required (so the token request, which must repeat it, has something to match).
    const redirectUri = query.redirect_uri;
    if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
      return refused('invalid_request', 'redirect_uri is not one of the client\'s registered redirect URIs (compared exactly)');
    }
    const id = newId('oauthRequest');
    await this.requests.createRequest({
      id,
      clientId: client.id,
      redirectUri,
      state: state ?? null,
      codeChallenge: challenge,
      expiresAt: new Date(Date.now() + OAUTH_LIFETIMES.requestSeconds * 1000),
    });
    return { kind: 'consent', location: `${this.issuer.issuer}${OAUTH_PATHS.consent}?request=${id}` };
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
  async approve(accountId: string, requestId: string, input: ApproveInput, actor: AuditActor): Promise<Approval> {
    const request = await this.pendingRequest(requestId);
    const now = new Date();
    const unusable = generateSecret('api');
    const code = generateOAuthSecret('code');
    const asOfMs = now.getTime();
    const approved = await this.requests.approve(
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
      redirect_to: redirectWith(request.redirectUri, { code, state: request.state ?? undefined, iss: this.issuer.issuer }),
      grant_id: grant.id,
      key_id: changed.row.id,
      keyHash: changed.row.keyHash,
    };
  }

  /** The owner denies: the one error that goes back to the client (`access_denied`, RFC 6749 section 4.1.2.1), after the owner acted. */
  async deny(requestId: string): Promise<{ redirect_to: string }> {
    const request = await this.pendingRequest(requestId);
    if (!(await this.requests.decide(request.id, new Date()))) throw requestGone();
    return { redirect_to: redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'the owner denied the request', state: request.state ?? undefined, iss: this.issuer.issuer }) };
  }

  private async pendingRequest(requestId: string): Promise<RequestRow & { client: ClientRow }> {
    const request = isId('oauthRequest', requestId) ? await this.requests.findRequest(requestId) : null;
    if (request === null || request.decidedAt !== null || request.expiresAt.getTime() <= Date.now()) throw requestGone();
    return request;
  }
}

function refused(error: string, description: string): AuthorizeOutcome {
  return { kind: 'refused', error: new OAuthError(error, description) };
}

function requestGone(): AppError {
  return new AppError('not_found', 'this authorization request was already decided or has expired; start again from the app');
}
