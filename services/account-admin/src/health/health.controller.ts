import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DatabaseRepository } from '../db/database.repository';
import { KeyCacheRepository } from '../key-cache/key-cache.repository';

@Controller()
export class HealthController {
  constructor(
    @Inject(DatabaseRepository) private readonly db: DatabaseRepository,
    @Inject(KeyCacheRepository) private readonly redis: KeyCacheRepository,
  ) {}

  /** The process is up. */
  @Get('healthz')
  health(): { ok: true } {
    return { ok: true };
  }

  /** PostgreSQL and Redis answer; 503 naming what does not. */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply): Promise<{ ok: boolean; postgres: boolean; redis: boolean }> {
    const [postgres, redis] = await Promise.all([
      this.db.ping().then(() => true, () => false),
      this.redis.ping().then(() => true, () => false),
    ]);
    const ok = postgres && redis;
    if (!ok) void reply.status(503);
    return { ok, postgres, redis };
  }
}
