import { INTERNAL_HEADERS } from '@svc/contracts';
import { requestClientAddress } from '@svc/http-edge';
import type { AddressList } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import { headerOf, isInternalRequest } from './request-context';

/**
 * The address of the client behind a request (the sign-in limits' and the audit log's). Through
 * the gateway (internal token present) it is the address the gateway resolved with its
 * TRUSTED_PROXIES (x-svc-client-address; @svc/http-edge clientAddress). Anyone else's
 * x-svc-* header was dropped by the gateway or fails the token check (a gateway of an earlier
 * build sends none: then the last x-forwarded-for entry, the one it appended); a direct caller's
 * address is resolved here the same way, with account-admin's own TRUSTED_PROXIES.
 */
export function clientAddress(request: FastifyRequest, trustedProxies: AddressList): string {
  if (isInternalRequest(request)) {
    const resolved = headerOf(request, INTERNAL_HEADERS.clientAddress)?.trim();
    if (resolved !== undefined && resolved !== '') return resolved;
    // A gateway of an earlier build (during a rollout) sends no x-svc-client-address: the last
    // x-forwarded-for entry is the address it appended from its own socket.
    const header = request.headers['x-forwarded-for'];
    const last = (Array.isArray(header) ? header.join(',') : header)?.split(',').pop()?.trim();
    if (last !== undefined && last !== '') return last;
  }
  return requestClientAddress(request, trustedProxies);
}
