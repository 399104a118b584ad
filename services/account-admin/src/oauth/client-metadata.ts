import { isIP } from 'node:net';
import { guardedLookup, hostRefusal, refusedAddressOf, systemResolver } from '@svc/address-policy';
import type { AddressReach, Resolver } from '@svc/address-policy';
import { OAUTH_LIMITS } from '@svc/contracts';
import { isWellFormedText } from '@svc/http-edge';
import { Agent, request } from 'undici';

/**
 * Client ID Metadata Documents: a client whose `client_id` is an https URL publishes its
 * metadata (`client_name`, `redirect_uris`) as JSON at that URL, and the authorization server
 * fetches it. The fetch is a server-side request to an address the client chose, so:
 * https only, no credentials, no redirects, a short timeout, a size cap, and the platform's
 * one address policy (`@svc/address-policy`, decision 0047): an address literal outside the
 * public internet is refused before any request, and a name is checked in the socket's own
 * DNS lookup, on every address it resolves to (so a DNS answer that changes between check
 * and connect cannot slip through). `allowPrivate` (local and test stacks only) lifts the
 * https and address rules.
 */

/** The reason a client_id URL or its document is refused; the message is safe to show the client. */
export class ClientMetadataError extends Error {}

export interface ClientMetadata {
  clientId: string;
  name: string;
  redirectUris: string[];
}

/** True when the value has the shape of a metadata-document client id (an https URL with a path). */
export function isClientIdUrl(value: string, allowPrivate: boolean): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const schemeOk = url.protocol === 'https:' || (allowPrivate && url.protocol === 'http:');
  return schemeOk && url.pathname !== '/' && url.hash === '' && url.username === '' && url.password === '' && value.length <= OAUTH_LIMITS.uri.max;
}

export class ClientMetadataFetcher {
  private readonly agent: Agent;
  private readonly reach: AddressReach;

  /** `resolver`: the names' DNS (the system's; a test's own answers). */
  constructor(private readonly allowPrivate: boolean, resolver: Resolver = systemResolver) {
    this.reach = allowPrivate ? 'any' : 'public';
    this.agent = new Agent({
      connect: { lookup: guardedLookup(this.reach, resolver) },
      headersTimeout: OAUTH_LIMITS.metadataFetchTimeoutMs,
      bodyTimeout: OAUTH_LIMITS.metadataFetchTimeoutMs,
    });
  }

  /** Fetches and checks the document at `clientId`; throws ClientMetadataError with a reason. */
  async fetch(clientId: string): Promise<ClientMetadata> {
    if (!isClientIdUrl(clientId, this.allowPrivate)) throw new ClientMetadataError('client_id is not an https URL with a path');
    const host = new URL(clientId).hostname;
    // An address literal is never looked up, so it is checked here; a name, when the socket connects.
    if (hostRefusal(host, this.reach) !== null) {
      const literal = host.startsWith('[') || isIP(host) !== 0;
      throw new ClientMetadataError(literal ? 'the client_id host is not a public address' : 'the client_id host does not resolve to a public address');
    }
    let text: string;
    try {
      const response = await request(clientId, {
        method: 'GET',
        dispatcher: this.agent,
        headers: { accept: 'application/json' },
        maxRedirections: 0,
        signal: AbortSignal.timeout(OAUTH_LIMITS.metadataFetchTimeoutMs),
      } as Parameters<typeof request>[1]);
      if (response.statusCode !== 200) {
        await response.body.dump();
        throw new ClientMetadataError(`the client metadata document answered HTTP ${response.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > OAUTH_LIMITS.metadataDocumentBytes) {
          response.body.destroy();
          throw new ClientMetadataError('the client metadata document is too large');
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (error) {
      if (error instanceof ClientMetadataError) throw error;
      if (refusedAddressOf(error) !== null) throw new ClientMetadataError('the client_id host does not resolve to a public address');
      throw new ClientMetadataError('the client metadata document could not be fetched');
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw new ClientMetadataError('the client metadata document is not JSON');
    }
    return checkDocument(clientId, document, this.allowPrivate);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** The document's rules: its client_id is the URL it was fetched from, a name, exact redirect URIs, a public client. */
export function checkDocument(clientId: string, document: unknown, allowPrivate: boolean): ClientMetadata {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) throw new ClientMetadataError('the client metadata document is not a JSON object');
  const doc = document as Record<string, unknown>;
  if (doc.client_id !== clientId) throw new ClientMetadataError('the client metadata document names another client_id');
  const method = doc.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') throw new ClientMetadataError('token_endpoint_auth_method must be "none" (public clients with PKCE)');
  const redirectUris = checkRedirectUris(doc.redirect_uris, allowPrivate);
  const name = typeof doc.client_name === 'string' && doc.client_name.trim() !== '' ? doc.client_name.trim().slice(0, OAUTH_LIMITS.clientName.max) : new URL(clientId).host;
  return { clientId, name, redirectUris };
}

/**
 * Redirect URIs: absolute, no fragment, https (or http on a loopback host, RFC 8252 native
 * apps), or a private-use scheme of a native app (`com.example.app:/cb`). Compared exactly later.
 */
export function checkRedirectUris(value: unknown, _allowPrivate: boolean): string[] {
  if (!Array.isArray(value) || value.length < OAUTH_LIMITS.redirectUris.min || value.length > OAUTH_LIMITS.redirectUris.max) {
    throw new ClientMetadataError(`redirect_uris must be an array of ${OAUTH_LIMITS.redirectUris.min} to ${OAUTH_LIMITS.redirectUris.max} URIs`);
  }
  for (const uri of value) {
    if (typeof uri !== 'string' || uri.length > OAUTH_LIMITS.uri.max) throw new ClientMetadataError('every redirect URI must be a string of at most 2048 characters');
    // A lone UTF-16 surrogate is no character of any URI (and PostgreSQL's text[] could not hold it).
    if (!isWellFormedText(uri)) throw new ClientMetadataError('a redirect URI must not hold a lone UTF-16 surrogate');
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      throw new ClientMetadataError(`redirect URI ${JSON.stringify(uri.slice(0, 100))} is not an absolute URI`);
    }
    if (url.hash !== '') throw new ClientMetadataError('a redirect URI must not have a fragment');
    const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
    const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && loopback) || /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol);
    if (!allowed) throw new ClientMetadataError('a redirect URI must be https, http on a loopback host, or a native app\'s private-use scheme');
  }
  return value as string[];
}
