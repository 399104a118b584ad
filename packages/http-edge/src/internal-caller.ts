import type { IncomingMessage } from 'node:http';
import { INTERNAL_HEADERS } from '@svc/contracts';
import type { RequiredKind } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { isInternal } from './request-ids';
import { headerValue } from './secrets-equal';

/** The key the gateway authenticated, as it forwarded it. */
export interface InternalCaller {
  accountId: string;
  keyId: string;
  kind: 'api' | 'management';
}

/**
 * The one internal-token check of the control plane. /v1 requests come from the gateway,
 * which authenticated the key and names it in x-svc-* headers; those headers are trusted
 * only with the right internal token. Without it, or with a malformed identity, the caller
 * is 401 invalid_api_key; the wrong kind of key for the route is 403 wrong_key_type.
 */
export function internalCaller(headers: IncomingMessage['headers'], internalToken: string, required: RequiredKind): InternalCaller {
  const unknown = new AppError('invalid_api_key', 'missing or invalid API key');
  if (!isInternal(headers, internalToken)) throw unknown;
  const accountId = headerValue(headers, INTERNAL_HEADERS.accountId);
  const keyId = headerValue(headers, INTERNAL_HEADERS.keyId);
  const kind = headerValue(headers, INTERNAL_HEADERS.keyKind);
  if (!isId('account', accountId) || (kind !== 'api' && kind !== 'management')) throw unknown;
  if (!isId(kind === 'api' ? 'apiKey' : 'managementKey', keyId)) throw unknown;
  if (required !== 'either' && required !== kind) {
    throw new AppError('wrong_key_type', required === 'management' ? 'this endpoint needs a management key' : 'this endpoint needs an API key');
  }
  return { accountId, keyId, kind };
}
