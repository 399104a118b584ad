import { Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DrainState, drainingReadiness, PublicController } from '@svc/http-edge';

export const READINESS = Symbol('READINESS');

/** Reachability of the stores billing needs. */
export interface Readiness {
  check(): Promise<Record<string, boolean>>;
}

/**
 * Public on both listeners: liveness and readiness, no secrets, no identities. While the
 * process drains (SIGTERM), /readyz is 503 `draining` at once on both.
 */
@PublicController()
export class HealthController {
  constructor(
    @Inject(READINESS) private readonly readiness: Readiness,
    @Inject(DrainState) private readonly drain: DrainState,
  ) {}

  @Get('healthz')
  health(@Req() request: FastifyRequest): { status: string; request_id: string } {
    return { status: 'ok', request_id: request.id };
  }

  @Get('readyz')
  async ready(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<{ status: string; checks: Record<string, boolean>; request_id: string }> {
    if (this.drain.draining) {
      void reply.status(503);
      return drainingReadiness(request.id);
    }
    const checks = await this.readiness.check();
    const ok = Object.values(checks).every(Boolean);
    void reply.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'unavailable', checks, request_id: request.id };
  }
}
