import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DrainState, freshRequestIds, trustedRequestIds } from '@svc/http-edge';
import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { Logger } from 'pino';
import { GrpcAccountDirectory } from '../adapters/account-directory.adapter';
import { StripeAdapter } from '../adapters/stripe.adapter';
import type { BillingConfig } from '../config';
import { createBillingDatabase, DatabaseProbeRepository } from '../db/prisma.repository';
import { Transactions } from '../db/transactions';
import { createListener } from '../http/listener';
import { keepRawJsonBodies } from '../http/raw-body';
import { createLogger } from '../logger';
import { AuditLogService } from '../services/audit/audit-log.service';
import { BacklogService } from '../services/backlog/backlog.service';
import { FinanceService } from '../services/finance/finance.service';
import { RedisProbe } from '../services/health/redis-probe.adapter';
import { HistoryService } from '../services/history/history.service';
import { LedgerService } from '../services/ledger/ledger.service';
import { BillingMetrics } from '../services/metrics/metrics';
import { EndpointsService } from '../services/outbound-webhooks/endpoints.service';
import { EventsService } from '../services/outbound-webhooks/events.service';
import { ProviderBreakers } from '../services/provider-breakers/provider-breakers';
import { AutoTopupService } from '../services/purchases/auto-topup.service';
import { CheckoutService } from '../services/purchases/checkout.service';
import { PurchaseCredit } from '../services/purchases/purchase-credit';
import { StripeWebhookService } from '../services/purchases/stripe-webhook.service';
import type { WebhookHooks } from '../services/purchases/stripe-webhook.service';
import { ReconciliationRedisAdapter } from '../services/reconciliation/reconciliation-redis.adapter';
import { ReconciliationService } from '../services/reconciliation/reconciliation.service';
import { SettingsService } from '../services/settings/settings.service';
import { SpendableBalanceAdapter } from '../services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../services/spendable/spendable-outbox.service';
import { UsageService } from '../services/usage/usage.service';
import { ResearchQueueAdapter } from '../services/research/research-queue.adapter';
import { ResearchService } from '../services/research/research.service';
import { ResearchSpendableAdapter } from '../services/spendable/research-spendable.adapter';
import { ResearchRepository } from '../stores/research.repository';
import { AuditRepository } from '../stores/audit.repository';
import { AutoTopupRepository } from '../stores/auto-topups.repository';
import { CheckoutRepository } from '../stores/checkout.repository';
import { EventsRepository } from '../stores/events.repository';
import { FinanceRepository } from '../stores/finance.repository';
import { HistoryRepository } from '../stores/history.repository';
import { LedgerAppendRepository } from '../stores/ledger-append.repository';
import { LedgerRepository } from '../stores/ledger.repository';
import { PurchasesRepository } from '../stores/purchases.repository';
import { ReconciliationRepository } from '../stores/reconciliation.repository';
import { SettingsRepository } from '../stores/settings.repository';
import { UsageRepository } from '../stores/usage.repository';
import { EndpointsRepository } from '../stores/webhook-endpoints.repository';
import { OperatorApiModule, PublicApiModule } from './app.module';
import type { SharedDeps } from './app.module';

export { createLogger };

export interface RunningBilling {
  /** e.g. http://127.0.0.1:3002 */
  publicUrl: string;
  /** e.g. http://127.0.0.1:8081 */
  operatorUrl: string;
  logger: Logger;
  /** The process's metrics (main.ts serves them on METRICS_PORT). */
  metrics: BillingMetrics;
  /** Both listeners' drain (main.ts starts it on SIGTERM): /readyz 503, `connection: close`. */
  drain: DrainState;
  /** Closes both listeners (they stop accepting; requests in flight finish), then the stores. */
  close(): Promise<void>;
}

function urlOf(app: NestFastifyApplication): string {
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('listener has no TCP address');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
}

/**
 * Starts billing: two Nest applications in one process, each on its own Fastify instance
 * and port, sharing one Prisma pool and one gRPC channel. The public API's route table
 * holds no operator route, so nothing the gateway forwards can reach the operator API.
 */
export interface BillingHooks {
  /** Test seams of the Stripe webhook (fault injection after its commit). */
  webhook?: WebhookHooks;
}

export async function startBilling(config: BillingConfig, logger: Logger = createLogger(config.LOG_LEVEL), hooks: BillingHooks = {}): Promise<RunningBilling> {
  const metrics = new BillingMetrics();
  const db = createBillingDatabase(config.DATABASE_URL, (error) => logger.warn({ err: error.message }, 'idle postgres connection failed; the pool replaces it'));
  const prisma = db.prisma;
  const accounts = new GrpcAccountDirectory(config.ACCOUNT_ADMIN_GRPC_URL, logger.child({ component: 'account-admin-client' }));
  const redis = new RedisProbe({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER });
  const database = new DatabaseProbeRepository(prisma);
  // The spendable balance: a connection that fails fast, so a Redis outage never holds a
  // committed grant's reply (the outbox applies it later).
  const money = createRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  money.on('error', (error: Error) => logger.debug({ err: error }, 'redis connection error'));
  // The stores: every SQL statement of the process is one of theirs (docs/decisions/0040).
  const transactions = new Transactions(prisma);
  const repository = new LedgerRepository(prisma);
  const ledgerAppend = new LedgerAppendRepository(db.pool);
  const audit = new AuditRepository(prisma);
  const events = new EventsRepository(prisma);
  const autoTopupRepository = new AutoTopupRepository(prisma);
  const purchases = new PurchasesRepository(prisma);
  const spendable = new SpendableBalanceAdapter(money);
  const researchRuns = new ResearchRepository(prisma);
  const researchMoney = new ResearchSpendableAdapter(money);
  const outbox = new SpendableOutboxService(repository, spendable, logger.child({ component: 'spendable-outbox' }), { adapter: researchMoney, runs: researchRuns });
  // The research queues' producer: its own connection (BullMQ's commands wait on it; a run not queued is queued by the worker's sweep).
  const queueConnection = createRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
  queueConnection.on('error', (error: Error) => logger.debug({ err: error }, 'redis connection error'));
  const researchQueue = new ResearchQueueAdapter(queueConnection);
  const ledger = new LedgerService({ transactions, ledger: repository, append: ledgerAppend, audit }, accounts, outbox, spendable);
  const readiness = {
    async check(): Promise<Record<string, boolean>> {
      const [postgres, redisUp] = await Promise.all([database.ping(), redis.ping()]);
      return { postgres, redis: redisUp };
    },
  };
  const reconciliation = new ReconciliationService(
    new ReconciliationRepository(prisma), new ReconciliationRedisAdapter(money), logger.child({ component: 'reconciliation' }), config.RECONCILE_STALE_AFTER_MS,
  );
  const stripe = config.STRIPE_SECRET_KEY === undefined
    ? null
    : new StripeAdapter({ secretKey: config.STRIPE_SECRET_KEY, apiBase: config.STRIPE_API_BASE, timeoutMs: config.STRIPE_TIMEOUT_MS });
  const checkout = new CheckoutService(stripe, { transactions, checkout: new CheckoutRepository(), audit }, {
    successUrl: config.CHECKOUT_SUCCESS_URL, cancelUrl: config.CHECKOUT_CANCEL_URL,
  });
  const credit = new PurchaseCredit(purchases, ledgerAppend);
  const autoTopupService = new AutoTopupService(
    { transactions, autoTopups: autoTopupRepository, ledger: repository, events, credit, audit }, stripe, outbox, logger.child({ component: 'auto-topup' }),
  );
  const webhooks = new StripeWebhookService(
    stripe, config.STRIPE_WEBHOOK_SECRET ?? null, { transactions, purchases, autoTopups: autoTopupRepository, ledger: ledgerAppend, events, credit },
    outbox, logger.child({ component: 'stripe-webhook' }), hooks.webhook, metrics, autoTopupService,
  );
  const drain = new DrainState();
  const deps: SharedDeps = {
    ledger, readiness, reconciliation, backlog: new BacklogService(money), checkout, webhooks, drain, breakers: new ProviderBreakers(money),
    usage: new UsageService(new UsageRepository(prisma)),
    history: new HistoryService(new HistoryRepository(prisma)),
    finance: new FinanceService(new FinanceRepository(prisma), reconciliation),
    events: new EventsService(events),
    endpoints: new EndpointsService({ transactions, endpoints: new EndpointsRepository(prisma), audit }, { allowHttpAndLoopback: config.WEBHOOK_ALLOW_HTTP_AND_LOOPBACK }),
    settings: new SettingsService({ transactions, settings: new SettingsRepository(prisma), autoTopups: autoTopupRepository, audit }, autoTopupService.enabled),
    autoTopups: autoTopupService,
    setupUrls: { successUrl: config.CHECKOUT_SUCCESS_URL, cancelUrl: config.CHECKOUT_CANCEL_URL },
    audit: new AuditLogService(audit),
    research: new ResearchService({ transactions, runs: researchRuns, append: ledgerAppend }, researchMoney, outbox, researchQueue, logger.child({ component: 'research' }), {
      runTimeoutMs: config.RESEARCH_RUN_TIMEOUT_MS,
    }),
  };
  const apps: NestFastifyApplication[] = [];
  const close = async (): Promise<void> => {
    await Promise.allSettled(apps.map((app) => app.close()));
    accounts.close();
    await redis.close();
    await researchQueue.close().catch(() => undefined);
    await closeRedisClient(queueConnection);
    await closeRedisClient(money);
    await db.close();
  };
  try {
    const publicApp = await createListener({
      module: PublicApiModule.register(deps, config.INTERNAL_TOKEN),
      logger: logger.child({ listener: 'public' }),
      requestIds: trustedRequestIds(config.INTERNAL_TOKEN),
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      http: metrics.http,
      drain,
      maxBodyDepth: config.HTTP_MAX_BODY_DEPTH,
    });
    apps.push(publicApp);
    keepRawJsonBodies(publicApp, config.HTTP_MAX_BODY_DEPTH);
    const operatorApp = await createListener({
      module: OperatorApiModule.register(deps, config.OPERATOR_TOKEN),
      logger: logger.child({ listener: 'operator' }),
      requestIds: freshRequestIds,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      http: metrics.http,
      drain,
      maxBodyDepth: config.HTTP_MAX_BODY_DEPTH,
    });
    apps.push(operatorApp);
    await publicApp.listen(config.PORT, config.HOST);
    await operatorApp.listen(config.OPERATOR_PORT, config.HOST);
    return { publicUrl: urlOf(publicApp), operatorUrl: urlOf(operatorApp), logger, metrics, drain, close };
  } catch (error) {
    await close();
    throw error;
  }
}
