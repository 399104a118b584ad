/**
 * The OAuth 2.1 surface of the connector URL (docs/decisions/0029-oauth-for-connectors.md),
 * declared once: the paths (the gateway routes and forwards them, account-admin serves the
 * authorization server, the metadata documents name them) and the lifetimes.
 */
export const OAUTH_PATHS = {
  /** The protected resource: the MCP server for OAuth clients (`/mcp` stays key-only). */
  resource: '/mcp/oauth',
  /** RFC 9728: the resource's metadata, at the well-known path followed by the resource's path. */
  resourceMetadata: '/.well-known/oauth-protected-resource/mcp/oauth',
  /** RFC 8414: the authorization server's metadata (the issuer is the public base URL, no path). */
  serverMetadata: '/.well-known/oauth-authorization-server',
  register: '/oauth/register',
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  revoke: '/oauth/revoke',
  /** The dashboard's consent page (`?request=oar_...`). */
  consent: '/dashboard/oauth/consent',
} as const;

export const OAUTH_LIFETIMES = {
  /** An authorization code: single use, at most 60 s (the bound; RFC 6749 advises 10 min at most). */
  codeSeconds: 60,
  /** An access token. Revocation does not wait for it: tokens resolve through the key machinery. */
  accessTokenSeconds: 3_600,
  /** A refresh token; each use replaces it. */
  refreshTokenSeconds: 30 * 24 * 3_600,
  /** An authorization request waiting for the owner's consent. */
  requestSeconds: 600,
} as const;

/** Bounds of client registration and authorization parameters. */
export const OAUTH_LIMITS = {
  clientName: { max: 100 },
  redirectUris: { min: 1, max: 10 },
  /** A redirect URI, a client id URL, a state. */
  uri: { max: 2_048 },
  state: { max: 1_024 },
  /** A dynamic registration's body (RFC 7591), in bytes: a client's metadata is a few hundred; larger is 413. */
  registrationBodyBytes: 8 * 1024,
  /** A Client ID Metadata Document, in bytes. */
  metadataDocumentBytes: 64 * 1024,
  metadataFetchTimeoutMs: 5_000,
} as const;
