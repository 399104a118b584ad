import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { CreditsController } from './credits/credits.controller';
import { HealthController, READINESS } from './health/health.controller';
import type { Readiness } from './health/health.controller';
import { INTERNAL_TOKEN, InternalAuthGuard } from './http/internal-auth.guard';
import { OPERATOR_TOKEN, OperatorAuthGuard } from './http/operator-auth.guard';
import { LedgerService } from './ledger/ledger.service';
import { OperatorController } from './operator/operator.controller';

/** What both listeners share: one ledger service (one Prisma pool), one readiness probe. */
export interface SharedDeps {
  ledger: LedgerService;
  readiness: Readiness;
}

/** The internal HTTP API the gateway forwards to (PORT). */
@Module({})
export class PublicApiModule {
  static register(deps: SharedDeps, internalToken: string): DynamicModule {
    return {
      module: PublicApiModule,
      controllers: [CreditsController, HealthController],
      providers: [
        { provide: LedgerService, useValue: deps.ledger },
        { provide: READINESS, useValue: deps.readiness },
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
      controllers: [OperatorController, HealthController],
      providers: [
        { provide: LedgerService, useValue: deps.ledger },
        { provide: READINESS, useValue: deps.readiness },
        { provide: OPERATOR_TOKEN, useValue: operatorToken },
        OperatorAuthGuard,
      ],
    };
  }
}
