import { INTERNAL_HEADERS } from '@svc/contracts';
import { headerValue, normalizeAddress } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import type { CallerIdentity } from './internal-auth.guard';
import type { AuditActor } from '@svc/contracts';

/**
 * The audit log's actor of a request InternalAuthGuard admitted (the internal token checked):
 * a dashboard session when account-admin relays it (x-svc-user-id), else the management key
 * the gateway authenticated; the client's address as the gateway or account-admin resolved it
 * (a session's request without it names none).
 */
export function auditActorOf(caller: CallerIdentity, request: FastifyRequest): AuditActor {
  const forwarded = headerValue(request.headers, INTERNAL_HEADERS.clientAddress);
  const userId = headerValue(request.headers, INTERNAL_HEADERS.userId);
  // A session's request comes through account-admin: the socket's peer is account-admin, not
  // the client, so without the address it passed on the entry names none.
  return userId !== undefined && /^usr_[0-9A-Za-z]{24}$/.test(userId)
    ? { kind: 'session', id: userId, clientAddress: forwarded ?? null }
    : { kind: 'management_key', id: caller.keyId, clientAddress: forwarded ?? normalizeAddress(request.ip) };
}

/** An operator's request (the operator API): the operator, and the address it came from. */
export function operatorActorOf(request: FastifyRequest): AuditActor {
  return { kind: 'operator', id: 'operator', clientAddress: normalizeAddress(request.ip) };
}
