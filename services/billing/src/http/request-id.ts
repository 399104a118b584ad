import type { IncomingMessage } from 'node:http';
import { INTERNAL_HEADERS } from '@svc/contracts';
import { newRequestId } from '@svc/ids';
import { headerValue, secretsEqual } from './constant-time';

const REQUEST_ID = /^req_[0-9A-Za-z]{24,64}$/;

export type RequestIdGenerator = (request: IncomingMessage) => string;

/**
 * The public listener reuses the gateway's request id (x-svc-request-id) when the request
 * carries the internal token; anyone else gets a fresh id.
 */
export function gatewayRequestIds(internalToken: string): RequestIdGenerator {
  return (request) => {
    const incoming = headerValue(request.headers, INTERNAL_HEADERS.requestId);
    if (incoming !== undefined && REQUEST_ID.test(incoming) && secretsEqual(headerValue(request.headers, INTERNAL_HEADERS.token), internalToken)) {
      return incoming;
    }
    return newRequestId();
  };
}

/** The operator listener always makes its own ids. */
export const freshRequestIds: RequestIdGenerator = () => newRequestId();
