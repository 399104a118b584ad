import { AuditController } from '../http/audit/audit.controller';
import { AuditRepository } from '../stores/audit.repository';
import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { DrainState } from '@svc/http-edge';
import { CreditsController } from '../http/credits/credits.controller';
import { HealthController, READINESS } from '../http/health/health.controller';
import type { Readiness } from '../http/health/health.controller';
import { INTERNAL_TOKEN, InternalAuthGuard } from '../http/internal-auth.guard';
import { OPERATOR_TOKEN, OperatorAuthGuard } from '../http/operator-auth.guard';
import { LedgerService } from '../services/ledger/ledger.service';
import { OperatorController } from '../http/operator/operator.controller';
import { ProviderBreakers, ProviderBreakersController } from '../services/provider-breakers/provider-breakers';
import { BacklogService } from '../services/backlog/backlog.service';
import { ReconciliationController } from '../http/reconciliation/reconciliation.controller';
import { ReconciliationService } from '../services/reconciliation/reconciliation.service';
import { CheckoutController } from '../http/checkout/checkout.controller';
import { CheckoutService } from '../services/purchases/checkout.service';
import { WebhookController } from '../http/stripe-webhook/stripe-webhook.controller';
import { WebhookService } from '../services/purchases/stripe-webhook.service';
import { UsageController } from '../http/usage/usage.controller';
import { UsageService } from '../services/usage/usage.service';
import { FinanceController } from '../http/finance/finance.controller';
import { FinanceService } from '../services/finance/finance.service';
import { HistoryController } from '../http/history/history.controller';
import { HistoryService } from '../services/history/history.service';
import { EventsController } from '../http/events/events.controller';
import { EventsRepository } from '../stores/events.repository';
import { WEBHOOK_URL_POLICY, WebhookEndpointsController } from '../http/webhook-endpoints/endpoints.controller';
import { EndpointsRepository } from '../stores/webhook-endpoints.repository';
import type { UrlPolicy } from '../services/outbound-webhooks/url-policy';
import { BillingSettingsController, SETUP_URLS } from '../http/settings/settings.controller';
import { AutoTopupRepository } from '../stores/auto-topups.repository';
import { AutoTopupService } from '../services/purchases/auto-topup.service';
import type { SetupUrls } from '../services/purchases/auto-topup.service';
import { SettingsRepository } from '../stores/settings.repository';

/** What both listeners share: one ledger service (one Prisma pool), one readiness probe. */
export interface SharedDeps {
  ledger: LedgerService;
  readiness: Readiness;
  reconciliation: ReconciliationService;
  backlog: BacklogService;
  /** Stripe Checkout (src/checkout, src/webhook). */
  checkout: CheckoutService;
  webhooks: WebhookService;
  usage: UsageService;
  /** The dashboard's activity and purchase history (src/history). */
  history: HistoryService;
  finance: FinanceService;
  /** Whether the process drains (SIGTERM): both listeners' /readyz answer 503 `draining`. */
  drain: DrainState;
  /** The providers' breakers the gateways share (operator/provider-breakers.ts). */
  breakers: ProviderBreakers;
  /** Events, webhook endpoints and billing settings (docs/decisions/0028). */
  events: EventsRepository;
  endpoints: EndpointsRepository;
  settings: SettingsRepository;
  /** Automatic top-up: its settings and state, the setup session that saves a card (src/auto-topup). */
  autoTopups: AutoTopupRepository;
  autoTopupService: AutoTopupService;
  setupUrls: SetupUrls;
  urlPolicy: UrlPolicy;
  /** billing's part of the audit log (src/audit). */
  audit: AuditRepository;
}

/** The internal HTTP API the gateway forwards to (PORT). */
@Module({})
export class PublicApiModule {
  static register(deps: SharedDeps, internalToken: string): DynamicModule {
    return {
      module: PublicApiModule,
      controllers: [
        CreditsController, CheckoutController, WebhookController, UsageController, HistoryController, AuditController, HealthController,
        EventsController, WebhookEndpointsController, BillingSettingsController,
      ],
      providers: [
        { provide: AuditRepository, useValue: deps.audit },
        { provide: EventsRepository, useValue: deps.events },
        { provide: EndpointsRepository, useValue: deps.endpoints },
        { provide: SettingsRepository, useValue: deps.settings },
        { provide: AutoTopupRepository, useValue: deps.autoTopups },
        { provide: AutoTopupService, useValue: deps.autoTopupService },
        { provide: SETUP_URLS, useValue: deps.setupUrls },
        { provide: WEBHOOK_URL_POLICY, useValue: deps.urlPolicy },
        { provide: LedgerService, useValue: deps.ledger },
        { provide: CheckoutService, useValue: deps.checkout },
        { provide: WebhookService, useValue: deps.webhooks },
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
