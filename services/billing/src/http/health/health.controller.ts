import { Get, Inject, Optional, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DrainState, drainingReadiness, PublicController } from '@svc/http-edge';
import type { DrainingReadiness } from '@svc/http-edge';

export const READINESS = Symbol('READINESS');

/** Reachability of the stores billing needs. */
export interface Readiness {
  check(): Promise<Record<string, boolean>>;
}

export const WORKER_STATUS = Symbol('WORKER_STATUS');

/** Extra figures the ledger worker shows on /readyz (the backlog, reconciliation counters). */
export interface WorkerStatus {
  snapshot(): Promise<Record<string, unknown>>;
}

/** /readyz's answer: the stores' reachability, and the worker's figures on the worker's listener. */
export interface ReadinessAnswer {
  status: string;
  checks: Record<string, boolean>;
  request_id: string;
  [figure: string]: unknown;
}

/**
 * Public on every listener: liveness and readiness, no secrets, no identities. While the
 * process drains (SIGTERM), /readyz is 503 `draining` at once on the service's listeners. The
 * ledger worker's health listener (no DrainState, a WorkerStatus) adds the settlement backlog
 * to /readyz, so an operator sees it while PostgreSQL is down.
 */
@PublicController()
export class HealthController {
  constructor(
    @Inject(READINESS) private readonly readiness: Readiness,
    @Optional() @Inject(DrainState) private readonly drain?: DrainState,
    @Optional() @Inject(WORKER_STATUS) private readonly status?: WorkerStatus,
  ) {}

  @Get('healthz')
  health(@Req() request: FastifyRequest): { status: string; request_id: string } {
    return { status: 'ok', request_id: request.id };
  }

  @Get('readyz')
  async ready(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<ReadinessAnswer | DrainingReadiness> {
    if (this.drain?.draining === true) {
      void reply.status(503);
      return drainingReadiness(request.id);
    }
    const [checks, extra] = await Promise.all([this.readiness.check(), this.status?.snapshot().catch(() => ({}))]);
    const ok = Object.values(checks).every(Boolean);
    void reply.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'unavailable', checks, ...extra, request_id: request.id };
  }
}
