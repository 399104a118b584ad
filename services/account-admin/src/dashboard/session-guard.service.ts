import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { DashboardActor } from '../billing/billing.adapter';
import { headerOf } from '../http/request-context';
import { DashboardService } from './dashboard.service';

/** The signed-in user a session endpoint acts for: 401 without a live session, 400 without the CSRF token on a change. */
@Injectable()
export class SessionGuardService {
  constructor(@Inject(DashboardService) private readonly dashboard: DashboardService) {}

  async forRead(req: FastifyRequest): Promise<DashboardActor> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    return { accountId: session.user.accountId, userId: session.user.id };
  }

  async forChange(req: FastifyRequest): Promise<DashboardActor> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    this.dashboard.requireCsrf(session, headerOf(req, 'x-csrf-token'));
    return { accountId: session.user.accountId, userId: session.user.id };
  }
}
