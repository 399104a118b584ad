import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { OAUTH_LIMITS } from '@svc/contracts';
import { isId, newId } from '@svc/ids';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { checkRedirectUris, ClientMetadataError, ClientMetadataFetcher, isClientIdUrl } from './client-metadata';
import { ClientsRepository } from './clients.repository';
import { OAuthError } from './oauth-error';
import type { ClientRow } from './oauth-rows';

/** What POST /oauth/register answers (RFC 7591 section 3.2.1). */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
}

/**
 * The clients of the authorization server (docs/decisions/0029): public clients registered
 * dynamically (RFC 7591), and clients known by their Client ID Metadata Document, fetched at
 * each authorization through the platform's address policy (client-metadata.ts).
 */
@Injectable()
export class ClientRegistrationService implements OnApplicationShutdown {
  private readonly fetcher: ClientMetadataFetcher;

  constructor(
    @Inject(ClientsRepository) private readonly clients: ClientsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.fetcher = new ClientMetadataFetcher(config.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.fetcher.close();
  }

  /** RFC 7591 dynamic registration of a public client; unknown metadata is ignored (section 2). */
  async register(body: unknown): Promise<RegisteredClient> {
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
    const client = await this.clients.createClient({ id: newId('oauthClient'), kind: 'dynamic', name, redirectUris, fetchedAt: null });
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
   * The client a `client_id` names: a registered one, or a metadata-document client fetched
   * (again) from its URL and stored. Null when there is none; a document that cannot be
   * fetched or is refused answers `invalid_client` with the reason.
   */
  async resolve(clientId: string): Promise<ClientRow | null> {
    if (isId('oauthClient', clientId)) return this.clients.findClient(clientId);
    if (!isClientIdUrl(clientId, this.config.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE)) return null;
    try {
      const metadata = await this.fetcher.fetch(clientId);
      return await this.clients.upsertDocumentClient(metadata.clientId, metadata.name, metadata.redirectUris, new Date());
    } catch (error) {
      if (error instanceof ClientMetadataError) throw new OAuthError('invalid_client', `client_id: ${error.message}`);
      throw error;
    }
  }
}
