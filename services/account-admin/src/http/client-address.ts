import type { FastifyRequest } from 'fastify';
import type { Logger } from '../logging/logger';
import { contextOf } from './request-context';

/**
 * The address of the client behind a request. Through the gateway (internal token present)
 * it is the last x-forwarded-for entry, the one the gateway appended from its own socket;
 * anyone else's x-forwarded-for is ignored and the socket's address used.
 */
export function clientAddress(request: FastifyRequest, logger: Logger): string {
  if (contextOf(request, logger).internal) {
    const header = request.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header.join(',') : header;
    const last = value?.split(',').pop()?.trim();
    if (last !== undefined && last !== '') return last;
  }
  return request.ip;
}
