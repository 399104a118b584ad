import { INTERNAL_HEADERS } from '@svc/contracts';
import type { KeyKind } from '@svc/keys';

export type HeaderValue = string | string[] | undefined;
export type HeaderMap = Record<string, HeaderValue>;
export type OutgoingHeaders = Record<string, string | string[]>;

/**
 * RFC 9110 section 7.6.1 connection-specific fields, never forwarded either way; and
 * `expect`, which asks this hop for a 100 Continue (the gateway has already answered it
 * and read the whole body; the upstream client refuses the header).
 */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect',
]);

/** The authenticated key a forwarded request acts as. */
export interface ForwardIdentity {
  accountId: string;
  keyId: string;
  kind: KeyKind;
  /** The key's limit and fence as headers (keyFactsHeaders), on the routes that ask for them. */
  facts?: Readonly<Record<string, string>>;
}

export interface ForwardContext {
  internalToken: string;
  requestId: string;
  identity: ForwardIdentity | null;
  /** The socket's peer, appended to X-Forwarded-For. */
  clientIp: string;
  /** The client's address as resolved with TRUSTED_PROXIES (x-svc-client-address); absent: not sent. */
  clientAddress?: string;
}

function connectionListed(headers: HeaderMap): Set<string> {
  const listed = new Set<string>();
  const value = headers.connection;
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  for (const item of values) for (const name of item.split(',')) listed.add(name.trim().toLowerCase());
  return listed;
}

function isDropped(name: string, listed: Set<string>): boolean {
  return HOP_BY_HOP.has(name) || listed.has(name) || name.startsWith('x-svc-');
}

/**
 * Headers sent to a control-plane service: the caller's, less hop-by-hop fields, Host and
 * Content-Length (the client recomputes both), Authorization (the gateway has already
 * verified it; the secret goes no further) and every incoming x-svc-* header (a caller
 * cannot claim an identity); plus the internal token, the request id and the key.
 */
export function upstreamRequestHeaders(incoming: HeaderMap, context: ForwardContext): OutgoingHeaders {
  const listed = connectionListed(incoming);
  const out: OutgoingHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue;
    if (isDropped(name, listed) || name === 'host' || name === 'content-length' || name === 'authorization') continue;
    out[name] = value;
  }
  const forwardedFor = incoming['x-forwarded-for'];
  const previous = Array.isArray(forwardedFor) ? forwardedFor.join(', ') : forwardedFor;
  out['x-forwarded-for'] = previous === undefined || previous === '' ? context.clientIp : `${previous}, ${context.clientIp}`;
  out[INTERNAL_HEADERS.token] = context.internalToken;
  out[INTERNAL_HEADERS.requestId] = context.requestId;
  if (context.clientAddress !== undefined) out[INTERNAL_HEADERS.clientAddress] = context.clientAddress;
  if (context.identity !== null) {
    out[INTERNAL_HEADERS.accountId] = context.identity.accountId;
    out[INTERNAL_HEADERS.keyId] = context.identity.keyId;
    out[INTERNAL_HEADERS.keyKind] = context.identity.kind;
    for (const [name, value] of Object.entries(context.identity.facts ?? {})) out[name] = value;
  }
  return out;
}

export interface ClientResponseHeaders {
  headers: OutgoingHeaders;
  /** Hashes named by x-svc-changed-key-hash: drop them from the cache before replying. */
  changedKeyHashes: string[];
  /** The account named by x-svc-changed-provider-keys (its provider keys changed), or null. */
  changedProviderKeysAccount: string | null;
}

/**
 * Headers passed back to the caller: the service's, less hop-by-hop fields,
 * Content-Length (recomputed) and every x-svc-* header (the gateway sets its own request
 * id; the changed-key hash is for the gateway alone).
 */
export function clientResponseHeaders(upstream: HeaderMap): ClientResponseHeaders {
  const listed = connectionListed(upstream);
  const headers: OutgoingHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined) continue;
    if (isDropped(name, listed) || name === 'content-length') continue;
    headers[name] = value;
  }
  const changed = upstream[INTERNAL_HEADERS.changedKeyHash];
  const changedKeyHashes: string[] = [];
  for (const item of Array.isArray(changed) ? changed : changed === undefined ? [] : [changed]) {
    for (const hash of item.split(',')) {
      const trimmed = hash.trim().toLowerCase();
      if (/^[0-9a-f]{64}$/.test(trimmed)) changedKeyHashes.push(trimmed);
    }
  }
  const providerKeys = upstream[INTERNAL_HEADERS.changedProviderKeys];
  const account = Array.isArray(providerKeys) ? providerKeys[0] : providerKeys;
  const changedProviderKeysAccount = account !== undefined && /^acct_[0-9A-Za-z]{1,64}$/.test(account.trim()) ? account.trim() : null;
  return { headers, changedKeyHashes, changedProviderKeysAccount };
}
