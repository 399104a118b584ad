import { INTERNAL_HEADERS } from '@svc/contracts';
import { headerValue, normalizeAddress } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import type { CallerIdentity } from './internal-auth.guard';
import type { AuditActor } from '../stores/audit.repository';

/**
 * The audit log's actor of a request InternalAuthGuard admitted (the internal token checked):
 * a dashboard session when account-admin relays it (x-svc-user-id), else the management key
 * the gateway authenticated; the client's address as the gateway or account-admin resolved it.
 */
export function auditActorOf(caller: CallerIdentity, request: FastifyRequest): AuditActor {
  const address = headerValue(request.headers, INTERNAL_HEADERS.clientAddress) ?? normalizeAddress(request.ip);
  const userId = headerValue(request.headers, INTERNAL_HEADERS.userId);
  return userId !== undefined && /^usr_[0-9A-Za-z]{24}$/.test(userId)
    ? { kind: 'session', id: userId, clientAddress: address }
    : { kind: 'management_key', id: caller.keyId, clientAddress: address };
}

/** An operator's request (the operator API): the operator, and the address it came from. */
export function operatorActorOf(request: FastifyRequest): AuditActor {
  return { kind: 'operator', id: 'operator', clientAddress: normalizeAddress(request.ip) };
}
