import type { Actor } from '../http/actor';
import type { AuditActor } from './audit';

/**
 * The audit log's actor of a request: a management key (its id) or a dashboard session (the
 * user's id), and the client's address ActorGuard resolved. An API key changes nothing, so
 * never appears.
 */
export function auditActorOf(actor: Actor): AuditActor {
  return actor.via === 'key'
    ? { kind: 'management_key', id: actor.keyId, clientAddress: actor.clientAddress }
    : { kind: 'session', id: actor.userId, clientAddress: actor.clientAddress };
}
