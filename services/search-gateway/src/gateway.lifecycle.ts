import type { OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { KeyChangesSubscriber } from './auth/key-changes.subscriber';
import type { GrpcKeyOwner } from './auth/key-lookup.grpc';
import type { UpstreamClient } from './forward/upstream.client';
import type { MainRedisClient } from './redis/main-redis.client';

/** How long shutdown waits for Redis to answer the last settlements. */
const SETTLEMENT_DRAIN_MS = 10_000;

/**
 * Starts and stops the gateway's connections in one place. Nest runs the shutdown hook
 * after the HTTP server has closed (no new requests, in-flight ones finished), so nothing
 * in use is closed under a request.
 */
export class GatewayLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly redis: MainRedisClient,
    private readonly subscriber: KeyChangesSubscriber | null,
    private readonly owner: Pick<GrpcKeyOwner, 'close'>,
    private readonly upstreams: readonly UpstreamClient[],
    private readonly log: Logger,
    /** Settlements still being answered by Redis (waited for before the connection closes). */
    private readonly settlements?: { drainSettlements(timeoutMs: number): Promise<boolean>; closeSettlements(): void },
  ) {}

  async onModuleInit(): Promise<void> {
    await this.redis.connect();
    if (this.subscriber !== null) await this.subscriber.start();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.subscriber !== null) await this.subscriber.stop();
    await Promise.all(this.upstreams.map((upstream) => upstream.close()));
    this.owner.close();
    if (this.settlements !== undefined && !(await this.settlements.drainSettlements(SETTLEMENT_DRAIN_MS))) {
      this.log.error('settlements still unanswered by redis at shutdown; each one left is logged with its record');
    }
    this.settlements?.closeSettlements();
    await this.redis.close();
    this.log.info('search-gateway stopped');
  }
}
