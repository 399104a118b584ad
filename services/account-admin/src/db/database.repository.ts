import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';

/** The one Prisma client of the service; repositories use `client`, nothing else does. */
@Injectable()
export class DatabaseRepository implements OnApplicationShutdown {
  readonly client: PrismaClient;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = new PrismaClient({ adapter: new PrismaPg({ connectionString: config.DATABASE_URL }) });
  }

  async ping(): Promise<void> {
    await this.client.$queryRaw`SELECT 1`;
  }

  /**
   * On shutdown, not on module destroy: Nest runs shutdown hooks after the HTTP server has
   * closed (requests in flight finished) and, dependents first, after the gRPC server and the
   * outbox loop stopped, so nothing in use is closed under a request. The Redis clients
   * (KeyCacheRepository, AttemptCountersRepository) close the same way.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.client.$disconnect();
  }
}

/** True for Prisma's unique-constraint violation (P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}
