import { startMetricsServer } from '@svc/metrics';
import type { Logger } from 'pino';
import { logBacklogEvery } from '../services/backlog/backlog-log';
import { BacklogService, backlogView } from '../services/backlog/backlog.service';
import { DatabaseProbeRepository } from '../db/prisma.repository';
import { ConfirmingStreamAdapter } from '../services/hydration/confirming-stream.adapter';
import { HydrationLoop } from '../services/hydration/hydration-loop';
import { HydrationRedisAdapter } from '../services/hydration/hydration-redis.adapter';
import { HydrationRepository } from '../stores/hydration.repository';
import { HydrationService } from '../services/hydration/hydration.service';
import { GrpcKeyUseSink, KeyUseRecorder } from '../services/key-use/key-use.recorder';
import { LedgerAppendRepository } from '../stores/ledger-append.repository';
import { LedgerRepository } from '../stores/ledger.repository';
import { LedgerWorkerMetrics } from '../services/metrics/metrics';
import { ReservationWalk } from '../services/reconciliation/reservation-walk';
import { ReconciliationJob } from '../services/reconciliation/reconciliation-job';
import { ReconciliationRedisAdapter } from '../services/reconciliation/reconciliation-redis.adapter';
import { ReconciliationRepository } from '../stores/reconciliation.repository';
import { ReconciliationService } from '../services/reconciliation/reconciliation.service';
import { LedgerDrainService } from '../services/settlement/ledger-drain.service';
import { SpendableBalanceAdapter } from '../services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../services/spendable/spendable-outbox.service';
import type { LedgerWorkerConfig } from '../worker-config';
import { ledgerProcessor } from './ledger.processor';
import { startQueues } from './queue-processor';
import { reconcileProcessor } from './reconcile.processor';
import { startWorkerHealth } from './worker-health';
import { Opened, openWorkerStores } from './worker-base';
import { StripeAdapter } from '../adapters/stripe.adapter';
import { Transactions } from '../db/transactions';
import { AutoTopupService, DEFAULT_AUTO_TOPUP_TIMING } from '../services/purchases/auto-topup.service';
import { PurchaseCredit } from '../services/purchases/purchase-credit';
import { AuditRepository } from '../stores/audit.repository';
import { AutoTopupRepository } from '../stores/auto-topups.repository';
import { EventsRepository } from '../stores/events.repository';
import { PurchasesRepository } from '../stores/purchases.repository';
import { ThresholdsRepository } from '../stores/thresholds.repository';
import { DeliveriesRepository } from '../stores/webhook-deliveries.repository';
import { outboundProcessors } from './outbound';

export interface RunningLedgerWorker {
  url: string;
  /** The metrics listener's URL (null when METRICS_PORT could not be taken). */
  metricsUrl: string | null;
  close(): Promise<void>;
}

/**
 * The ledger worker (src/worker.ts starts it with the environment it read): the parts, one
 * processor per BullMQ queue (`*.processor.ts`; a new queue is one more entry in the list
 * below), the health and metrics listeners and the recovery loop. Everything it opened is
 * closed in the reverse order, the queues' current jobs finishing first.
 */
export async function startLedgerWorker(config: LedgerWorkerConfig, logger: Logger): Promise<RunningLedgerWorker> {
  const opened = new Opened(logger);
  const close = opened.close;
  try {
    const { db, data, target } = openWorkerStores(config, logger, opened);

    const keyUses = new KeyUseRecorder(new GrpcKeyUseSink(config.ACCOUNT_ADMIN_GRPC_URL), logger.child({ component: 'key-use' }), config.KEY_USE_FLUSH_INTERVAL_MS);
    keyUses.start();
    opened.push('key-use recorder', () => keyUses.stop());
    const repository = new LedgerRepository(db.prisma);
    const ledgerAppend = new LedgerAppendRepository(db.pool);
    const recovery = new HydrationRedisAdapter(data);
    const backlog = new BacklogService(data);
    const reconciliationLog = logger.child({ component: 'reconciliation' });
    const reconciliationRedis = new ReconciliationRedisAdapter(data);
    const reconciliation = new ReconciliationJob(
      new ReconciliationService(new ReconciliationRepository(db.prisma), reconciliationRedis, reconciliationLog, config.RECONCILE_STALE_AFTER_MS),
      reconciliationLog,
      { releaseStale: true, correctDrift: config.RECONCILE_REPAIR },
      100,
      new ReservationWalk(reconciliationRedis, config.RECONCILE_SCAN_KEYS, config.RECONCILE_INTERVAL_MS),
    );
    const metrics = new LedgerWorkerMetrics({ backlog: () => backlog.measure(), reconciliation: () => reconciliation.counters });
    // The drain confirms every record it made durable, so the gateways stop retaining it.
    const drain = new LedgerDrainService(new ConfirmingStreamAdapter(data, recovery), ledgerAppend, logger.child({ component: 'drain' }), {
      batchSize: config.LEDGER_BATCH_SIZE,
      sweepScanKeys: config.LEDGER_SWEEP_SCAN_KEYS,
      observer: metrics,
      onCommitted: (records) => keyUses.note(records),
    });
    const outbox = new SpendableOutboxService(repository, new SpendableBalanceAdapter(data), logger.child({ component: 'outbox' }));

    // Webhook dispatch and delivery, thresholds and automatic top-up (decision 0028): one
    // processor each, on queues of their own. Without a Stripe key there are no top-ups.
    const stripe = config.STRIPE_SECRET_KEY === undefined
      ? null
      : new StripeAdapter({ secretKey: config.STRIPE_SECRET_KEY, apiBase: config.STRIPE_API_BASE, timeoutMs: config.STRIPE_TIMEOUT_MS });
    const transactions = new Transactions(db.prisma);
    const events = new EventsRepository(db.prisma);
    const autoTopups = stripe === null ? undefined : new AutoTopupService(
      {
        transactions, autoTopups: new AutoTopupRepository(db.prisma), ledger: repository, events,
        credit: new PurchaseCredit(new PurchasesRepository(db.prisma), ledgerAppend), audit: new AuditRepository(db.prisma),
      },
      stripe, outbox, logger.child({ component: 'auto-topup' }), { ...DEFAULT_AUTO_TOPUP_TIMING, retryAfterMs: config.AUTO_TOPUP_RETRY_AFTER_MS },
    );
    const outbound = outboundProcessors({
      stores: { transactions, deliveries: new DeliveriesRepository(db.prisma), thresholds: new ThresholdsRepository(db.prisma), events },
      config, redis: target, logger, accountAdminGrpcUrl: config.ACCOUNT_ADMIN_GRPC_URL, ...(autoTopups === undefined ? {} : { autoTopups }),
    });
    opened.push('outbound parts', () => outbound.close());
    const queues = await startQueues([
      ledgerProcessor({ drain, outbox, backlog, logger, drainEveryMs: config.LEDGER_DRAIN_INTERVAL_MS, sweepEveryMs: config.LEDGER_SWEEP_INTERVAL_MS }),
      reconcileProcessor(reconciliation, config.RECONCILE_INTERVAL_MS),
      ...outbound.processors,
    ], target, logger);
    opened.push('queues', () => queues.close());
    opened.push('backlog log', logBacklogEvery(backlog, logger, config.BACKLOG_LOG_INTERVAL_MS));

    const database = new DatabaseProbeRepository(db.prisma);
    const health = await startWorkerHealth({
      readiness: {
        async check() {
          const [postgres, redis] = await Promise.all([database.ping(), data.ping().then((reply) => reply === 'PONG', () => false)]);
          return { postgres, redis };
        },
      },
      status: { snapshot: async () => ({ backlog: backlogView(await backlog.measure()), reconciliation: { ...reconciliation.counters } }) },
      logger: logger.child({ listener: 'health' }), http: metrics.http, port: config.PORT, host: config.HOST, requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    });
    opened.push('health listener', () => health.close());
    const metricsServer = await startMetricsServer({ registry: metrics.registry, port: config.METRICS_PORT, host: config.HOST, log: logger });
    opened.push('metrics listener', () => metricsServer?.close());

    // Recovery from a Redis that lost its data: cold accounts are rebuilt from the ledger, and
    // the job schedulers (kept in Redis by BullMQ) are created again.
    const hydrationLog = logger.child({ component: 'hydration' });
    const hydration = new HydrationLoop(
      new HydrationService(new HydrationRepository(db.prisma), recovery, hydrationLog, { graceMs: config.HYDRATION_GRACE_MS }),
      recovery,
      hydrationLog,
      { intervalMs: config.HYDRATION_INTERVAL_MS, batch: 50, onEpochChange: () => queues.schedule() },
    );
    hydration.start();
    opened.push('hydration loop', () => hydration.stop());
    // A crash between a grant's commit and its Redis apply is repaired at start too.
    await outbox.applyPending().catch((error: unknown) => logger.warn({ err: error }, 'outbox apply at start failed; the sweep retries'));
    return { url: health.url, metricsUrl: metricsServer?.url ?? null, close };
  } catch (error) {
    await close();
    throw error;
  }
}
