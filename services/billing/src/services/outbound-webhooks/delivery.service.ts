import { WEBHOOK_RESPONSE_HEAD_BYTES, WEBHOOK_SIGNATURE_HEADER } from '@svc/contracts';
import type { Logger } from 'pino';
import type { DeliveriesRepository, DeliveryWork, QueuedDelivery } from '../../stores/webhook-deliveries.repository';
import { postWebhook } from './deliver';
import type { Resolver } from './deliver';
import { signatureHeader } from './signature';
import type { UrlPolicy } from './url-policy';

export type { DeliveryWork, QueuedDelivery };

/** How a delivery is attempted: where it may go, how long an attempt may take, how long it is retried. */
export interface DeliverySettings {
  policy: UrlPolicy;
  timeoutMs: number;
  retryWindowMs: number;
  /** Tests: the DNS answers deliveries see. */
  resolver?: Resolver;
}

/** What an attempt led to; `retry` is thrown by the processor so BullMQ tries again after its backoff. */
export type DeliveryOutcome = 'stale' | 'cancelled' | 'endpoint_disabled' | 'succeeded' | 'retry' | 'failed';

/** Pending deliveries put on the queue (the dispatch), and one attempt of one delivery (docs/decisions/0028). */
export class WebhookDeliveries {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly settings: DeliverySettings,
    private readonly log: Logger,
  ) {}

  /**
   * Pending deliveries no job carries yet, and those queued longer ago than `requeueOlderThanMs`
   * (their job may be gone with Redis's data: added again under the same job id, which BullMQ
   * ignores while the job exists; queued_at moves, so each is re-checked once per such period).
   */
  toQueue(limit: number, requeueOlderThanMs: number): Promise<QueuedDelivery[]> {
    return this.deliveries.toQueue(limit, requeueOlderThanMs);
  }

  markQueued(jobs: readonly QueuedDelivery[]): Promise<void> {
    return this.deliveries.markQueued(jobs);
  }

  /** The delivery to attempt, or why there is none for this job (another generation, or no longer pending). */
  async load(deliveryId: string, generation: number, now: Date): Promise<DeliveryWork | 'stale'> {
    const work = await this.deliveries.load(deliveryId, now);
    return work === null || work.generation !== generation || work.status !== 'pending' ? 'stale' : work;
  }

  /** Signs and POSTs the event once, and records what happened. */
  async attempt(work: DeliveryWork, now: Date): Promise<DeliveryOutcome> {
    if (work.endpoint === null) {
      await this.deliveries.close(work.id, work.generation, 'cancelled');
      return 'cancelled';
    }
    if (!work.endpoint.enabled) {
      await this.deliveries.close(work.id, work.generation, 'failed');
      return 'endpoint_disabled';
    }
    const body = JSON.stringify(work.event);
    const headers = { [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(body, work.endpoint.secrets, now.getTime() / 1000), 'svc-event-id': work.event.id, 'svc-delivery-id': work.id };
    const result = await postWebhook(work.endpoint.url, body, headers, {
      policy: this.settings.policy, timeoutMs: this.settings.timeoutMs, responseHeadBytes: WEBHOOK_RESPONSE_HEAD_BYTES, resolver: this.settings.resolver,
    });
    const outcome = await this.deliveries.recordAttempt(work, now, result, this.settings.retryWindowMs);
    if (outcome === 'endpoint_disabled') this.log.warn({ endpoint_id: work.endpoint.id, account_id: work.event.account_id }, 'webhook endpoint disabled after failing for the whole retry window');
    if (outcome === 'retry') throw new DeliveryRetry(work.id, result.error ?? 'unknown');
    return outcome;
  }
}

/** An attempt that failed within the retry window: BullMQ tries the job again after its backoff. */
export class DeliveryRetry extends Error {
  constructor(readonly deliveryId: string, reason: string) {
    super(`delivery ${deliveryId} failed: ${reason}`);
    this.name = 'DeliveryRetry';
  }
}
