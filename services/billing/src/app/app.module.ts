import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { DrainState } from '@svc/http-edge';
import { AuditController } from '../http/audit/audit.controller';
import { CheckoutController } from '../http/checkout/checkout.controller';
import { CreditsController } from '../http/credits/credits.controller';
import { EventsController } from '../http/events/events.controller';
import { FinanceController } from '../http/finance/finance.controller';
import { HealthController, READINESS } from '../http/health/health.controller';
import type { Readiness } from '../http/health/health.controller';
import { HistoryController } from '../http/history/history.controller';
import { INTERNAL_TOKEN, InternalAuthGuard } from '../http/internal-auth.guard';
import { OperatorController } from '../http/operator/operator.controller';
import { ProviderBreakersController } from '../http/operator/provider-breakers.controller';
import { OPERATOR_TOKEN, OperatorAuthGuard } from '../http/operator-auth.guard';
import { ReconciliationController } from '../http/finance/reconciliation.controller';
import { BillingSettingsController, SETUP_URLS } from '../http/settings/settings.controller';
import { StripeWebhookController } from '../http/stripe-webhook/stripe-webhook.controller';
import { UsageController } from '../http/usage/usage.controller';
import { WebhookEndpointsController } from '../http/webhook-endpoints/endpoints.controller';
import { ResearchController } from '../http/research/research.controller';
import { AuditLogService } from '../services/audit/audit-log.service';
import { BacklogService } from '../services/backlog/backlog.service';
import { FinanceService } from '../services/finance/finance.service';
import { HistoryService } from '../services/history/history.service';
import { LedgerService } from '../services/ledger/ledger.service';
import { EndpointsService } from '../services/outbound-webhooks/endpoints.service';
import { EventsService } from '../services/outbound-webhooks/events.service';
import { ProviderBreakers } from '../services/provider-breakers/provider-breakers';
import { AutoTopupService } from '../services/purchases/auto-topup.service';
import type { SetupUrls } from '../services/purchases/auto-topup.service';
import { CheckoutService } from '../services/purchases/checkout.service';
import { StripeWebhookService } from '../services/purchases/stripe-webhook.service';
import { ReconciliationService } from '../services/reconciliation/reconciliation.service';
import { SettingsService } from '../services/settings/settings.service';
import { UsageService } from '../services/usage/usage.service';
import { ResearchService } from '../services/research/research.service';

/** What both listeners share: the services (on one Prisma pool), one readiness probe, one drain. */
export interface SharedDeps {
  ledger: LedgerService;
  readiness: Readiness;
  reconciliation: ReconciliationService;
  backlog: BacklogService;
  /** Stripe Checkout and the Stripe webhook (src/services/purchases). */
  checkout: CheckoutService;
  webhooks: StripeWebhookService;
  usage: UsageService;
  /** The dashboard's activity and purchase history. */
  history: HistoryService;
  finance: FinanceService;
  /** Whether the process drains (SIGTERM): both listeners' /readyz answer 503 `draining`. */
  drain: DrainState;
  /** The providers' breakers the gateways share. */
  breakers: ProviderBreakers;
  /** Events, webhook endpoints and billing settings (docs/decisions/0028). */
  events: EventsService;
  endpoints: EndpointsService;
  settings: SettingsService;
  /** Automatic top-up: the setup session that saves a card. */
  autoTopups: AutoTopupService;
  setupUrls: SetupUrls;
  /** billing's part of the audit log. */
  audit: AuditLogService;
  /** Research runs (docs/decisions/0062). */
  research: ResearchService;
}

/** The internal HTTP API the gateway forwards to (PORT). Controllers get services only. */
@Module({})
export class PublicApiModule {
  static register(deps: SharedDeps, internalToken: string): DynamicModule {
    return {
      module: PublicApiModule,
      controllers: [
        CreditsController, CheckoutController, StripeWebhookController, UsageController, HistoryController, AuditController, HealthController,
        EventsController, WebhookEndpointsController, BillingSettingsController, ResearchController,
      ],
      providers: [
        { provide: AuditLogService, useValue: deps.audit },
        { provide: ResearchService, useValue: deps.research },
        { provide: EventsService, useValue: deps.events },
        { provide: EndpointsService, useValue: deps.endpoints },
        { provide: SettingsService, useValue: deps.settings },
        { provide: AutoTopupService, useValue: deps.autoTopups },
        { provide: SETUP_URLS, useValue: deps.setupUrls },
        { provide: LedgerService, useValue: deps.ledger },
        { provide: CheckoutService, useValue: deps.checkout },
        { provide: StripeWebhookService, useValue: deps.webhooks },
        { provide: UsageService, useValue: deps.usage },
        { provide: HistoryService, useValue: deps.history },
        { provide: READINESS, useValue: deps.readiness },
        { provide: DrainState, useValue: deps.drain },
        { provide: INTERNAL_TOKEN, useValue: internalToken },
        InternalAuthGuard,
      ],
    };
  }
}

/** The operator API (OPERATOR_PORT): a separate Fastify instance the public edge never routes. */
@Module({})
export class OperatorApiModule {
  static register(deps: SharedDeps, operatorToken: string): DynamicModule {
    return {
      module: OperatorApiModule,
      controllers: [OperatorController, ReconciliationController, FinanceController, ProviderBreakersController, HealthController],
      providers: [
        { provide: ProviderBreakers, useValue: deps.breakers },
        { provide: FinanceService, useValue: deps.finance },
        { provide: LedgerService, useValue: deps.ledger },
        { provide: ReconciliationService, useValue: deps.reconciliation },
        { provide: BacklogService, useValue: deps.backlog },
        { provide: READINESS, useValue: deps.readiness },
        { provide: DrainState, useValue: deps.drain },
        { provide: OPERATOR_TOKEN, useValue: operatorToken },
        OperatorAuthGuard,
      ],
    };
  }
}
