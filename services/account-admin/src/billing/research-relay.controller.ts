import { Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Actor, onDashboard, AccessController } from '../http/actor';
import { BillingAdapter } from './billing.adapter';
import { queryOf, relayToBilling } from './billing.controller';

const seg = (value: string): string => encodeURIComponent(value);

/**
 * The dashboard's Research page (a session; x-csrf-token on the cancel): the account's
 * research runs read and cancelled through billing's /v1/research routes, relayed as a
 * management key's calls are (docs/decisions/0015). Runs are created with an API key only.
 */
@AccessController()
export class ResearchRelayController {
  constructor(@Inject(BillingAdapter) private readonly billing: BillingAdapter) {}

  @Get(onDashboard('research'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/research${queryOf(req)}`, actor });
  }

  @Get(onDashboard('research/:id'))
  async get(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/research/${seg(id)}`, actor });
  }

  @Post(onDashboard('research/:id/cancel'))
  async cancel(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'POST', path: `/v1/research/${seg(id)}/cancel`, actor });
  }
}
