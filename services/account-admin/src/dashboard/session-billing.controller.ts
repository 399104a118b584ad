import { Body, Controller, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BillingAdapter } from '../billing/billing.adapter';
import type { BillingCall } from '../billing/billing.adapter';
import { SessionGuardService } from './session-guard.service';

/**
 * The dashboard's credits, checkout, usage, activity and purchase history: account-admin
 * resolves the session, then calls billing's internal HTTP API for the user's account the
 * way the gateway forwards /v1 (docs/decisions/0015-dashboard-reaches-billing.md). Query
 * strings and bodies pass unchanged, so billing validates them exactly as for /v1, and its
 * answer (status and JSON) is the answer.
 */
@Controller('dashboard/api')
export class SessionBillingController {
  constructor(
    @Inject(SessionGuardService) private readonly sessions: SessionGuardService,
    @Inject(BillingAdapter) private readonly billing: BillingAdapter,
  ) {}

  @Get('credits')
  async credits(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: '/v1/credits', actor: await this.sessions.forRead(req) });
  }

  @Post('credits/checkout')
  async checkout(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() raw: unknown): Promise<void> {
    const actor = await this.sessions.forChange(req);
    await this.relay(req, reply, { method: 'POST', path: '/v1/credits/checkout', actor, body: typeof raw === 'string' ? raw : '' });
  }

  @Get('usage')
  async usage(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/v1/usage${queryOf(req)}`, actor: await this.sessions.forRead(req) });
  }

  @Get('activity')
  async activity(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/internal/activity${queryOf(req)}`, actor: await this.sessions.forRead(req) });
  }

  @Get('usage/daily-by-model')
  async dailySpend(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/internal/daily-spend${queryOf(req)}`, actor: await this.sessions.forRead(req) });
  }

  @Get('credits/purchases')
  async purchases(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/internal/purchases${queryOf(req)}`, actor: await this.sessions.forRead(req) });
  }

  private async relay(req: FastifyRequest, reply: FastifyReply, call: Omit<BillingCall, 'requestId'>): Promise<void> {
    const answer = await this.billing.send({ ...call, requestId: req.id });
    await reply
      .code(answer.status)
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(answer.body);
  }
}

/** The query string exactly as the client sent it ('' or '?...'). */
function queryOf(req: FastifyRequest): string {
  const at = req.url.indexOf('?');
  return at === -1 ? '' : req.url.slice(at);
}
