import type { FastifyReply } from 'fastify';
import { INTERNAL_HEADERS } from '@svc/contracts';

/** Marks a reply that changed an account's provider keys: the gateway that forwarded it drops its copy at once. */
export function markChangedProviderKeys(reply: FastifyReply, accountId: string | null): void {
  if (accountId !== null) void reply.header(INTERNAL_HEADERS.changedProviderKeys, accountId);
}
