import { Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DrainState, drainingReadiness, PublicController } from '@svc/http-edge';
import type { DrainingReadiness } from '@svc/http-edge';
import { DatabaseRepository } from '../db/database.repository';
import { KeyCacheRepository } from '../key-cache/key-cache.repository';

/** Probes: public. */
@PublicController()
export class HealthController {
  constructor(
    @Inject(DatabaseRepository) private readonly db: DatabaseRepository,
    @Inject(KeyCacheRepository) private readonly redis: KeyCacheRepository,
    @Inject(DrainState) private readonly drain: DrainState,
  ) {}

  /** The process is up. */
  @Get('healthz')
  health(): { ok: true } {
    return { ok: true };
  }

  /**
   * PostgreSQL and Redis answer; 503 naming what does not. While the service drains
   * (SIGTERM), 503 `draining` at once, in the gateway's shape.
   */
  @Get('readyz')
  async ready(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ ok: boolean; postgres: boolean; redis: boolean } | DrainingReadiness> {
    if (this.drain.draining) {
      void reply.status(503);
      return drainingReadiness(request.id);
    }
    const [postgres, redis] = await Promise.all([
      this.db.ping().then(() => true, () => false),
      this.redis.ping().then(() => true, () => false),
    ]);
    const ok = postgres && redis;
    if (!ok) void reply.status(503);
    return { ok, postgres, redis };
  }
}
