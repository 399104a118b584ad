import type { IncomingMessage } from 'node:http';
import { INTERNAL_HEADERS } from '@svc/contracts';
import { isId, newRequestId } from '@svc/ids';
import { headerValue, secretsEqual } from './secrets-equal';

/** How a listener names each request (the id of x-svc-request-id and of every body). */
export type RequestIdSource = (request: IncomingMessage) => string;

/** Every request gets a new id (the public gateway, operator listeners). */
export const freshRequestIds: RequestIdSource = () => newRequestId();

/**
 * A control-plane listener behind the gateway keeps the gateway's id when the request also
 * carries the internal token, so one id names the request end to end; anyone else gets a
 * new id.
 */
export function trustedRequestIds(internalToken: string): RequestIdSource {
  return (request) => {
    const incoming = headerValue(request.headers, INTERNAL_HEADERS.requestId);
    if (incoming !== undefined && isId('request', incoming) && isInternal(request.headers, internalToken)) return incoming;
    return newRequestId();
  };
}

/** True when the request carries the internal token (constant-time comparison). */
export function isInternal(headers: IncomingMessage['headers'], internalToken: string): boolean {
  return secretsEqual(headerValue(headers, INTERNAL_HEADERS.token), internalToken);
}
