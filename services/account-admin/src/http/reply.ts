import type { FastifyReply, FastifyRequest } from 'fastify';
import { INTERNAL_HEADERS } from '@svc/contracts';

/** A success body with the request id at top level (docs/api.md section 3): the id the edge chose. */
export function withRequestId<T extends object>(request: FastifyRequest, body: T): T & { request_id: string } {
  return { ...body, request_id: request.id };
}

/** Marks a reply that changed a key, so the gateway drops that hash from its cache at once. */
export function markChangedKey(reply: FastifyReply, keyHash: string | null): void {
  if (keyHash !== null) void reply.header(INTERNAL_HEADERS.changedKeyHash, keyHash);
}
