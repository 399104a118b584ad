import { Body, Get, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Actor, onDashboard, AccessController } from '../http/actor';
import { BillingAdapter } from './billing.adapter';
import type { BillingCall } from './billing.adapter';

/**
 * The dashboard's credits, checkout, usage, activity and purchase history (a session;
 * x-csrf-token on checkout): account-admin calls billing's internal HTTP API for the user's
 * account the way the gateway forwards /v1 (docs/decisions/0015-dashboard-reaches-billing.md).
 * Query strings and bodies pass unchanged, so billing validates them exactly as for /v1, and
 * its answer (status and JSON) is the answer. /v1/credits and /v1/usage are billing's own
 * routes (the gateway forwards them there), so these paths are on the dashboard only.
 */
@AccessController()
export class BillingController {
  constructor(@Inject(BillingAdapter) private readonly billing: BillingAdapter) {}

  @Get(onDashboard('credits'))
  async credits(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: '/v1/credits', actor });
  }

  @Post(onDashboard('credits/checkout'))
  async checkout(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() raw: unknown): Promise<void> {
    await this.relay(req, reply, { method: 'POST', path: '/v1/credits/checkout', actor, body: typeof raw === 'string' ? raw : '' });
  }

  @Get(onDashboard('usage'))
  async usage(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/v1/usage${queryOf(req)}`, actor });
  }

  @Get(onDashboard('activity'))
  async activity(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/internal/activity${queryOf(req)}`, actor });
  }

  @Get(onDashboard('usage/daily-by-model'))
  async dailySpend(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/internal/daily-spend${queryOf(req)}`, actor });
  }

  @Get(onDashboard('credits/purchases'))
  async purchases(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.relay(req, reply, { method: 'GET', path: `/internal/purchases${queryOf(req)}`, actor });
  }

  private relay(req: FastifyRequest, reply: FastifyReply, call: Omit<BillingCall, 'requestId' | 'actor'> & { actor: Actor }): Promise<void> {
    return relayToBilling(this.billing, req, reply, call);
  }
}

/** One dashboard call relayed to billing, with the client's address (billing's audit entries record it): billing's status and JSON are the answer. */
export async function relayToBilling(billing: BillingAdapter, req: FastifyRequest, reply: FastifyReply, call: Omit<BillingCall, 'requestId' | 'actor'> & { actor: Actor }): Promise<void> {
  if (call.actor.via !== 'session') throw new Error('the billing relay serves dashboard sessions only');
  const answer = await billing.send({ ...call, actor: call.actor, clientAddress: call.actor.clientAddress, requestId: req.id });
  await reply
    .code(answer.status)
    .header('content-type', 'application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(answer.body);
}

/** The query string exactly as the client sent it ('' or '?...'). */
export function queryOf(req: FastifyRequest): string {
  const at = req.url.indexOf('?');
  return at === -1 ? '' : req.url.slice(at);
}
