import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { DrainState } from '@svc/http-edge';
import { AccountsRepository } from './accounts/accounts.repository';
import { AttemptCountersRepository } from './attempt-counters/attempt-counters.repository';
import { APP_CONFIG } from './config';
import type { AppConfig } from './config';
import { DashboardAssets } from './dashboard/dashboard-assets.adapter';
import { DASHBOARD_ASSETS, DashboardWebController } from './dashboard/dashboard-web.controller';
import { BillingAdapter } from './billing/billing.adapter';
import { BillingController } from './billing/billing.controller';
import { WebhooksRelayController } from './billing/webhooks-relay.controller';
import { ResearchRelayController } from './billing/research-relay.controller';
import { AuditController } from './audit/audit.controller';
import { AuditRepository } from './audit/audit.repository';
import { AuditService, BILLING_AUDIT_SOURCE } from './audit/audit.service';
import { DatabaseRepository } from './db/database.repository';
import { AccountAdminRpcService } from './grpc/grpc.service';
import { GrpcServerAdapter } from './grpc/grpc-server.adapter';
import { HealthController } from './health/health.controller';
import { ActorGuard, SESSION_RESOLVER } from './http/actor';
import { KeyCacheRepository } from './key-cache/key-cache.repository';
import { KeyCacheService } from './key-cache/key-cache.service';
import { KeyOutboxRepository } from './key-cache/key-outbox.repository';
import { KeyOutboxService } from './key-cache/key-outbox.service';
import { KeysController } from './keys/keys.controller';
import { ManagementKeysController } from './keys/management-keys.controller';
import { KeysRepository } from './keys/keys.repository';
import { KeysService } from './keys/keys.service';
import { LOGGER } from './logging/logger';
import { ConnectedAppsController } from './oauth/connected-apps.controller';
import { OAuthController } from './oauth/oauth.controller';
import { AuthorizationRequestsRepository } from './oauth/authorization-requests.repository';
import { AuthorizationService } from './oauth/authorization.service';
import { ClientRegistrationService } from './oauth/client-registration.service';
import { ClientsRepository } from './oauth/clients.repository';
import { ConnectedAppsService } from './oauth/connected-apps.service';
import { GrantRevocationService } from './oauth/grant-revocation.service';
import { GrantsRepository } from './oauth/grants.repository';
import { OAuthLimitsService } from './oauth/oauth-limits.service';
import { OAuthSweepRepository } from './oauth/oauth-sweep.repository';
import { OAuthSweepService } from './oauth/oauth-sweep.service';
import { TokensService } from './oauth/tokens.service';
import { AccountAdminMetrics, METRICS } from './metrics/metrics';
import { ProviderKeysController } from './provider-keys/provider-keys.controller';
import { ProviderKeysRepository } from './provider-keys/provider-keys.repository';
import { ProviderKeysService } from './provider-keys/provider-keys.service';
import type { Logger } from './logging/logger';
import { PasswordAdapter } from './sessions/password.adapter';
import { SessionsController } from './sessions/sessions.controller';
import { SessionsRepository } from './sessions/sessions.repository';
import { SessionsService } from './sessions/sessions.service';
import { SignInLimitService } from './sessions/sign-in-limit.service';
import { AccountLinksService } from './sessions/account-links.service';
import { MAIL_LINKS } from './mail/mail-links';
import { MailMessagesRepository } from './mail/mail-messages.repository';
import { MailQueueAdapter } from './mail/mail-queue.adapter';
import { MailService } from './mail/mail.service';
import { SmtpAdapter } from './mail/smtp.adapter';
import { NotificationsController } from './notifications/notifications.controller';
import { NotificationsRepository } from './notifications/notifications.repository';
import { NotificationsService } from './notifications/notifications.service';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger, metrics: AccountAdminMetrics = new AccountAdminMetrics(), drain: DrainState = new DrainState()): DynamicModule {
    return {
      module: AppModule,
      // One controller per resource; each serves /v1 and /dashboard/api where both exist
      // (src/http/actor.ts, docs/decisions/0020-actor-guard-and-one-source.md).
      controllers: [
        HealthController, KeysController, ManagementKeysController, ProviderKeysController, BillingController, WebhooksRelayController, ResearchRelayController,
        SessionsController, DashboardWebController, OAuthController, ConnectedAppsController, AuditController, NotificationsController,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: METRICS, useValue: metrics },
        { provide: DrainState, useValue: drain },
        DatabaseRepository,
        KeyCacheRepository,
        KeyCacheService,
        KeyOutboxRepository,
        KeyOutboxService,
        KeysRepository,
        KeysService,
        ClientsRepository,
        AuthorizationRequestsRepository,
        GrantsRepository,
        OAuthSweepRepository,
        ClientRegistrationService,
        AuthorizationService,
        GrantRevocationService,
        TokensService,
        ConnectedAppsService,
        OAuthLimitsService,
        OAuthSweepService,
        ProviderKeysRepository,
        ProviderKeysService,
        AccountsRepository,
        SessionsRepository,
        SessionsService,
        { provide: SESSION_RESOLVER, useExisting: SessionsService },
        ActorGuard,
        PasswordAdapter,
        BillingAdapter,
        AuditRepository,
        AuditService,
        { provide: BILLING_AUDIT_SOURCE, useExisting: BillingAdapter },
        {
          provide: DASHBOARD_ASSETS,
          useFactory: (log: Logger) => {
            const assets = DashboardAssets.load();
            if (!assets.built) log.warn('the dashboard web app is not built (npm run build): /dashboard answers 404');
            return assets;
          },
          inject: [LOGGER],
        },
        AttemptCountersRepository,
        SignInLimitService,
        SmtpAdapter,
        MailQueueAdapter,
        MailMessagesRepository,
        MailService,
        AccountLinksService,
        { provide: MAIL_LINKS, useExisting: AccountLinksService },
        NotificationsRepository,
        NotificationsService,
        AccountAdminRpcService,
        GrpcServerAdapter,
      ],
    };
  }
}
