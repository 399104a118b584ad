import { INTERNAL_HEADERS } from '@svc/contracts';
import { requestClientAddress } from '@svc/http-edge';
import type { AddressList } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import type { Logger } from '../logging/logger';
import { contextOf, headerOf } from './request-context';

/**
 * The address of the client behind a request (the sign-in limits' and the audit log's). Through
 * the gateway (internal token present) it is the address the gateway resolved with its
 * TRUSTED_PROXIES (x-svc-client-address; @svc/http-edge clientAddress). Anyone else's
 * x-svc-* header was dropped by the gateway or fails the token check; a direct caller's
 * address is resolved here the same way, with account-admin's own TRUSTED_PROXIES.
 */
export function clientAddress(request: FastifyRequest, logger: Logger, trustedProxies: AddressList): string {
  if (contextOf(request, logger).internal) {
    const resolved = headerOf(request, INTERNAL_HEADERS.clientAddress)?.trim();
    if (resolved !== undefined && resolved !== '') return resolved;
  }
  return requestClientAddress(request, trustedProxies);
}
