import { Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicController } from '@svc/http-edge';
import { READINESS } from '../health/health.controller';
import type { Readiness } from '../health/health.controller';

export const WORKER_STATUS = Symbol('WORKER_STATUS');

/** Extra figures the ledger worker shows on /readyz (the backlog, reconciliation counters). */
export interface WorkerStatus {
  snapshot(): Promise<Record<string, unknown>>;
}

/**
 * The ledger worker's health listener: /healthz, and /readyz with its stores' reachability
 * plus the settlement backlog (so an operator sees it while PostgreSQL is down).
 */
@PublicController()
export class WorkerHealthController {
  constructor(
    @Inject(READINESS) private readonly readiness: Readiness,
    @Inject(WORKER_STATUS) private readonly status: WorkerStatus,
  ) {}

  @Get('healthz')
  health(@Req() request: FastifyRequest): { status: string; request_id: string } {
    return { status: 'ok', request_id: request.id };
  }

  @Get('readyz')
  async ready(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, unknown>> {
    const [checks, extra] = await Promise.all([this.readiness.check(), this.status.snapshot().catch(() => ({}))]);
    const ok = Object.values(checks).every(Boolean);
    void reply.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'unavailable', checks, ...extra, request_id: request.id };
  }
}
