import { QUEUE_PREFIX, WEBHOOK_QUEUE } from '@svc/contracts';
import { closeRedisClient } from '@svc/redis-client';
import type { RedisTarget } from '@svc/redis-client';
import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { GrpcKeyLimitSource } from '../adapters/key-limits.adapter';
import type { KeyLimitSource } from '../adapters/key-limits.adapter';
import type { Transactions } from '../db/transactions';
import { BalanceThresholds } from '../services/outbound-webhooks/balance-thresholds';
import type { Resolver } from '../services/outbound-webhooks/deliver';
import { WebhookDeliveries } from '../services/outbound-webhooks/delivery.service';
import { KeyLimitThresholds } from '../services/outbound-webhooks/key-limit-thresholds';
import { retryDelayMs } from '../services/outbound-webhooks/webhook-config';
import type { WebhookConfig } from '../services/outbound-webhooks/webhook-config';
import type { EventsRepository } from '../stores/events.repository';
import type { ThresholdsRepository } from '../stores/thresholds.repository';
import type { DeliveriesRepository } from '../stores/webhook-deliveries.repository';
import { BullMqAlertMailQueue } from '../adapters/mail-queue.adapter';
import { AlertMails } from '../services/outbound-webhooks/alert-mails';
import { alertMailProcessor } from './alert-mail.processor';
import { autoTopupProcessor } from './auto-topup.processor';
import type { QueueProcessor } from './queue-processor';
import { thresholdsProcessor } from './thresholds.processor';
import { queueConnection } from './watched-worker';
import { webhookDeliveryProcessor } from './webhook-delivery.processor';
import type { DeliverJobData } from './webhook-delivery.processor';
import { webhookDispatchProcessor } from './webhook-dispatch.processor';

export interface OutboundParts {
  stores: { transactions: Transactions; deliveries: DeliveriesRepository; thresholds: ThresholdsRepository; events: EventsRepository };
  config: WebhookConfig;
  redis: RedisTarget;
  logger: Logger;
  /** account-admin's gRPC address (key limits for key.limit.threshold). */
  accountAdminGrpcUrl: string;
  /** Tests: where key limits come from (else GetKeyLimits at accountAdminGrpcUrl). */
  keyLimits?: KeyLimitSource;
  /** Tests: the DNS answers deliveries see. */
  resolver?: Resolver;
  /** Automatic top-up (src/services/purchases); none (no Stripe key): no processor. */
  autoTopups?: { evaluate(): Promise<number> };
  /** Tests: when a delivery waits for its account's share of the slots. */
  onWait?: (accountId: string) => void;
}

export interface Outbound {
  /** webhook dispatch, webhook delivery, thresholds, alerts to the mail queue and (with Stripe) automatic top-up: one processor each, for startQueues. */
  processors: QueueProcessor[];
  /** Closes what they opened (the dispatch's producer of deliver jobs, the mail queue's producer, the gRPC client of key limits). */
  close(): Promise<void>;
}

/**
 * The ledger worker's outbound side (docs/decisions/0028): its processors and the parts they
 * share, each processor on its own queue so a slow receiver holds up no threshold, top-up or
 * dispatch, and one account's deliveries hold at most their share of the delivery slots.
 */
export function outboundProcessors(parts: OutboundParts): Outbound {
  const { config, stores } = parts;
  const log = parts.logger.child({ component: 'webhooks' });
  const deliveries = new WebhookDeliveries(stores.deliveries, {
    policy: { allowHttpAndLoopback: config.WEBHOOK_ALLOW_HTTP_AND_LOOPBACK }, timeoutMs: config.WEBHOOK_TIMEOUT_MS, retryWindowMs: config.WEBHOOK_RETRY_WINDOW_MS,
    ...(parts.resolver === undefined ? {} : { resolver: parts.resolver }),
  }, log);
  const connection = queueConnection(parts.redis, log);
  const deliverQueue = new Queue<DeliverJobData, unknown, 'deliver'>(WEBHOOK_QUEUE, { connection, prefix: QUEUE_PREFIX });
  const limitSource = parts.keyLimits ?? new GrpcKeyLimitSource(parts.accountAdminGrpcUrl);
  // Alerts by email: account-admin's mail queue, on a connection of its own (decision 0054).
  const mailQueue = new BullMqAlertMailQueue(queueConnection(parts.redis, log));
  const thresholdStores = { transactions: stores.transactions, thresholds: stores.thresholds, events: stores.events };
  const processors: QueueProcessor[] = [
    webhookDispatchProcessor({
      deliveries, deliverQueue, everyMs: config.WEBHOOK_DISPATCH_INTERVAL_MS, requeueOlderThanMs: config.WEBHOOK_RETRY_MAX_DELAY_MS + 60_000,
    }),
    webhookDeliveryProcessor({
      deliveries, concurrency: config.WEBHOOK_CONCURRENCY, perAccount: config.WEBHOOK_ACCOUNT_CONCURRENCY, watchEveryMs: config.WEBHOOK_DISPATCH_INTERVAL_MS,
      retryDelayMs: (attemptsMade) => retryDelayMs(attemptsMade, config), logger: log, ...(parts.onWait === undefined ? {} : { onWait: parts.onWait }),
    }),
    thresholdsProcessor({
      balance: new BalanceThresholds(thresholdStores), keyLimits: new KeyLimitThresholds(thresholdStores, limitSource), everyMs: config.WEBHOOK_DISPATCH_INTERVAL_MS, logger: log,
    }),
    alertMailProcessor(new AlertMails(stores.events, mailQueue), config.WEBHOOK_DISPATCH_INTERVAL_MS),
  ];
  if (parts.autoTopups !== undefined) processors.push(autoTopupProcessor(parts.autoTopups, config.WEBHOOK_DISPATCH_INTERVAL_MS));
  return {
    processors,
    async close() {
      await deliverQueue.close().catch((error: unknown) => log.warn({ err: error }, 'closing the webhook queue failed'));
      await mailQueue.close().catch((error: unknown) => log.warn({ err: error }, 'closing the mail queue failed'));
      await closeRedisClient(connection).catch(() => undefined);
      limitSource.close();
    },
  };
}
