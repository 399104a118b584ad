import type { PrismaClient } from '../generated/prisma/client';
import { eventView } from '../common/events.view';
import type { EventView } from '../common/events.view';
import type { Tx } from '../db/transactions';

export interface DeliveryWork {
  id: string;
  generation: number;
  status: string;
  firstAttemptAt: Date | null;
  endpoint: { id: string; url: string; enabled: boolean; secrets: string[]; failingSince: Date | null } | null;
  event: EventView;
}

export type AttemptOutcome = 'succeeded' | 'retry' | 'failed' | 'endpoint_disabled';

/** What one attempt gave (delivery's AttemptResult). */
export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseHead: string | null;
}

/** A pending delivery for the queue: its job id is `<id>-<generation>`, and its account is whose share of the slots it takes. */
export interface QueuedDelivery {
  id: string;
  generation: number;
  accountId: string;
}

/** The worker's side of webhook_deliveries: what to send, and what each attempt did. */
export class DeliveriesRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Pending deliveries no job carries yet (oldest first), and those queued long ago (re-added; BullMQ ignores a job id it holds). */
  async toQueue(limit: number, requeueOlderThanMs: number): Promise<QueuedDelivery[]> {
    const rows = await this.prisma.$queryRaw<{ id: string; generation: number; account_id: string }[]>`
      (SELECT id, generation, account_id FROM webhook_deliveries WHERE status = 'pending' AND queued_at IS NULL ORDER BY created_at LIMIT ${limit})
      UNION ALL
      (SELECT id, generation, account_id FROM webhook_deliveries WHERE status = 'pending' AND queued_at < clock_timestamp() - ${requeueOlderThanMs} * interval '1 millisecond'
       ORDER BY queued_at LIMIT ${limit})`;
    return rows.map((r) => ({ id: r.id, generation: r.generation, accountId: r.account_id }));
  }

  async markQueued(jobs: readonly { id: string; generation: number }[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.prisma.$executeRaw`
      UPDATE webhook_deliveries d SET queued_at = clock_timestamp()
      FROM unnest(${jobs.map((j) => j.id)}::text[], ${jobs.map((j) => j.generation)}::int[]) AS q(id, generation)
      WHERE d.id = q.id AND d.generation = q.generation AND d.status = 'pending'`;
  }

  async load(deliveryId: string, now: Date): Promise<DeliveryWork | null> {
    const rows = await this.prisma.$queryRaw<{
      id: string; generation: number; status: string; first_attempt_at: Date | null;
      endpoint_id: string | null; url: string | null; enabled: boolean | null; secret: string | null; previous_secret: string | null;
      previous_secret_expires_at: Date | null; failing_since: Date | null;
      event_id: string; account_id: string; type: string; data: unknown; created_at: Date;
    }[]>`
      SELECT d.id, d.generation, d.status, d.first_attempt_at, w.id AS endpoint_id, w.url, w.enabled, w.secret, w.previous_secret,
        w.previous_secret_expires_at, w.failing_since, e.id AS event_id, e.account_id, e.type, e.data, e.created_at
      FROM webhook_deliveries d JOIN events e ON e.id = d.event_id LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.id = ${deliveryId}`;
    const r = rows[0];
    if (r === undefined) return null;
    const secrets = r.secret === null ? [] : [r.secret];
    if (r.previous_secret !== null && r.previous_secret_expires_at !== null && r.previous_secret_expires_at > now) secrets.push(r.previous_secret);
    return {
      id: r.id, generation: r.generation, status: r.status, firstAttemptAt: r.first_attempt_at,
      endpoint: r.endpoint_id === null || r.url === null ? null : { id: r.endpoint_id, url: r.url, enabled: r.enabled === true, secrets, failingSince: r.failing_since },
      event: eventView({ id: r.event_id, accountId: r.account_id, type: r.type, data: r.data, createdAt: r.created_at }),
    };
  }

  async close(deliveryId: string, generation: number, status: 'cancelled' | 'failed'): Promise<void> {
    await this.prisma.$executeRaw`UPDATE webhook_deliveries SET status = ${status} WHERE id = ${deliveryId} AND generation = ${generation} AND status = 'pending'`;
  }

  /**
   * Records one attempt and decides what follows, in one transaction: success closes the
   * delivery and clears the endpoint's failure; a failure within the window retries; past
   * the window the delivery fails, and an endpoint failing for the whole window is disabled.
   */
  async recordAttempt(work: DeliveryWork, attemptedAt: Date, result: AttemptRecord, windowMs: number): Promise<AttemptOutcome> {
    return this.prisma.$transaction(async (tx: Tx) => {
      await tx.$executeRaw`
        INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, error, duration_ms, response_head)
        VALUES (${work.id}, ${attemptedAt}, ${result.statusCode}, ${result.error}, ${result.durationMs}, ${result.responseHead})`;
      const ok = result.error === null;
      const updated = await tx.$queryRaw<{ first_attempt_at: Date }[]>`
        UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = ${attemptedAt},
          first_attempt_at = COALESCE(first_attempt_at, ${attemptedAt}), status = CASE WHEN ${ok} THEN 'succeeded' ELSE status END
        WHERE id = ${work.id} AND generation = ${work.generation} AND status = 'pending' RETURNING first_attempt_at`;
      const endpointId = work.endpoint?.id ?? '';
      if (ok) {
        await tx.$executeRaw`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`;
        return 'succeeded';
      }
      const failing = await tx.$queryRaw<{ failing_since: Date }[]>`
        UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${attemptedAt}) WHERE id = ${endpointId} RETURNING failing_since`;
      const since = failing[0]?.failing_since;
      if (since !== undefined && attemptedAt.getTime() - since.getTime() >= windowMs) {
        await tx.$executeRaw`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', updated_at = clock_timestamp() WHERE id = ${endpointId} AND enabled`;
        await tx.$executeRaw`UPDATE webhook_deliveries SET status = 'failed' WHERE id = ${work.id} AND status = 'pending'`;
        return 'endpoint_disabled';
      }
      const first = updated[0]?.first_attempt_at;
      if (first === undefined) return 'failed'; // redelivered or closed meanwhile: this job's generation is over
      if (attemptedAt.getTime() - first.getTime() >= windowMs) {
        await tx.$executeRaw`UPDATE webhook_deliveries SET status = 'failed' WHERE id = ${work.id} AND status = 'pending'`;
        return 'failed';
      }
      return 'retry';
    });
  }
}
