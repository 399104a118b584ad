import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { DrainState } from '@svc/http-edge';
import { AccountsRepository } from './accounts/accounts.repository';
import { APP_CONFIG } from './config';
import type { AppConfig } from './config';
import { DashboardController } from './dashboard/dashboard.controller';
import { DashboardRepository } from './dashboard/dashboard.repository';
import { DashboardService } from './dashboard/dashboard.service';
import { PasswordAdapter } from './dashboard/password.adapter';
import { DashboardAssets } from './dashboard/dashboard-assets.adapter';
import { DASHBOARD_ASSETS, DashboardWebController } from './dashboard/dashboard-web.controller';
import { SessionBillingController } from './dashboard/session-billing.controller';
import { SessionGuardService } from './dashboard/session-guard.service';
import { SessionKeysController } from './dashboard/session-keys.controller';
import { BillingAdapter } from './billing/billing.adapter';
import { SignInLimitRepository } from './dashboard/sign-in-limit.repository';
import { SignInLimitService } from './dashboard/sign-in-limit.service';
import { DatabaseRepository } from './db/database.repository';
import { AccountAdminRpcService } from './grpc/grpc.service';
import { GrpcServerAdapter } from './grpc/grpc-server.adapter';
import { HealthController } from './health/health.controller';
import { InternalAuth } from './http/internal-auth';
import { KeyCacheRepository } from './key-cache/key-cache.repository';
import { KeyCacheService } from './key-cache/key-cache.service';
import { KeyOutboxRepository } from './key-cache/key-outbox.repository';
import { KeyOutboxService } from './key-cache/key-outbox.service';
import { KeysController } from './keys/keys.controller';
import { KeysRepository } from './keys/keys.repository';
import { KeysService } from './keys/keys.service';
import { LOGGER } from './logging/logger';
import { AccountAdminMetrics, METRICS } from './metrics/metrics';
import { ProviderKeysController } from './provider-keys/provider-keys.controller';
import { ProviderKeysDashboardController } from './provider-keys/provider-keys.dashboard.controller';
import { ProviderKeysRepository } from './provider-keys/provider-keys.repository';
import { ProviderKeysService } from './provider-keys/provider-keys.service';
import type { Logger } from './logging/logger';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger, metrics: AccountAdminMetrics = new AccountAdminMetrics(), drain: DrainState = new DrainState()): DynamicModule {
    return {
      module: AppModule,
      controllers: [
        HealthController, KeysController, DashboardController, ProviderKeysController, ProviderKeysDashboardController,
        SessionKeysController, SessionBillingController, DashboardWebController,
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
        ProviderKeysRepository,
        ProviderKeysService,
        AccountsRepository,
        DashboardRepository,
        DashboardService,
        PasswordAdapter,
        SessionGuardService,
        BillingAdapter,
        {
          provide: DASHBOARD_ASSETS,
          useFactory: (log: Logger) => {
            const assets = DashboardAssets.load();
            if (!assets.built) log.warn('the dashboard web app is not built (npm run build): /dashboard answers 404');
            return assets;
          },
          inject: [LOGGER],
        },
        SignInLimitRepository,
        SignInLimitService,
        InternalAuth,
        AccountAdminRpcService,
        GrpcServerAdapter,
      ],
    };
  }
}
