import type { FastifyRequest } from 'fastify';
import type { Actor } from '../http/actor';
import { clientAddress } from '../http/client-address';
import type { AppConfig } from '../config';
import type { Logger } from '../logging/logger';
import type { AuditActor } from './audit';

/**
 * The audit log's actor of a request: a management key (its id) or a dashboard session (the
 * user's id), and the client's address. An API key changes nothing, so never appears.
 */
export function auditActorOf(actor: Actor, request: FastifyRequest, logger: Logger, config: Pick<AppConfig, 'TRUSTED_PROXIES'>): AuditActor {
  const address = clientAddress(request, logger, config.TRUSTED_PROXIES);
  return actor.via === 'key'
    ? { kind: 'management_key', id: actor.keyId, clientAddress: address }
    : { kind: 'session', id: actor.userId, clientAddress: address };
}
