import { newId } from '@svc/ids';
import type { WebhookEventType } from '@svc/contracts';
import type { Prisma } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

export interface NewEvent {
  accountId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/**
 * Writes an event and one pending delivery per enabled endpoint of the account subscribed to
 * its type, in the caller's transaction: the event exists exactly when what caused it
 * committed, and its deliveries with it. The ledger worker's dispatcher enqueues them.
 */
export async function emitEvent(tx: Tx, event: NewEvent): Promise<string> {
  const id = newId('event');
  await tx.$executeRaw`
    INSERT INTO events (id, account_id, type, data, created_at)
    VALUES (${id}, ${event.accountId}, ${event.type}, ${JSON.stringify(event.data)}::jsonb, clock_timestamp())`;
  const endpoints = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM webhook_endpoints WHERE account_id = ${event.accountId} AND enabled AND ${event.type} = ANY(events)`;
  for (const endpoint of endpoints) {
    await tx.$executeRaw`
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, status)
      VALUES (${newId('webhookDelivery')}, ${id}, ${endpoint.id}, ${event.accountId}, 'pending')`;
  }
  return id;
}
