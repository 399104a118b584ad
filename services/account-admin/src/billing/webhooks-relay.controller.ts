import { Body, Delete, Get, Inject, Param, Patch, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Actor, onDashboard, AccessController } from '../http/actor';
import { BillingAdapter } from './billing.adapter';
import { queryOf, relayToBilling } from './billing.controller';

const bodyOf = (raw: unknown): string => (typeof raw === 'string' ? raw : '');
const seg = (value: string): string => encodeURIComponent(value);

/**
 * The dashboard's events, webhook endpoints, billing settings and the setup session that saves
 * a card for automatic top-up (a session; x-csrf-token on every change), relayed to billing's /v1 routes for the user's account as the gateway
 * forwards a management key's calls (docs/decisions/0015 and 0028). Billing validates and
 * answers; a path parameter is passed percent-encoded, so it cannot name another path.
 */
@AccessController()
export class WebhooksRelayController {
  constructor(@Inject(BillingAdapter) private readonly billing: BillingAdapter) {}

  @Get(onDashboard('events'))
  async events(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/events${queryOf(req)}`, actor });
  }

  @Get(onDashboard('events/:id'))
  async event(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/events/${seg(id)}`, actor });
  }

  @Get(onDashboard('webhook-endpoints'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/webhook-endpoints${queryOf(req)}`, actor });
  }

  @Post(onDashboard('webhook-endpoints'))
  async create(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() raw: unknown): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'POST', path: '/v1/webhook-endpoints', actor, body: bodyOf(raw) });
  }

  @Get(onDashboard('webhook-endpoints/:id'))
  async get(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/webhook-endpoints/${seg(id)}`, actor });
  }

  @Patch(onDashboard('webhook-endpoints/:id'))
  async update(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Body() raw: unknown): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'PATCH', path: `/v1/webhook-endpoints/${seg(id)}`, actor, body: bodyOf(raw) });
  }

  @Delete(onDashboard('webhook-endpoints/:id'))
  async remove(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'DELETE', path: `/v1/webhook-endpoints/${seg(id)}`, actor });
  }

  @Post(onDashboard('webhook-endpoints/:id/rotate-secret'))
  async rotate(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'POST', path: `/v1/webhook-endpoints/${seg(id)}/rotate-secret`, actor });
  }

  @Get(onDashboard('webhook-endpoints/:id/deliveries'))
  async deliveries(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: `/v1/webhook-endpoints/${seg(id)}/deliveries${queryOf(req)}`, actor });
  }

  @Post(onDashboard('webhook-endpoints/:id/deliveries/:delivery/redeliver'))
  async redeliver(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('delivery') delivery: string): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'POST', path: `/v1/webhook-endpoints/${seg(id)}/deliveries/${seg(delivery)}/redeliver`, actor });
  }

  @Get(onDashboard('billing/settings'))
  async settings(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'GET', path: '/v1/billing/settings', actor });
  }

  @Patch(onDashboard('billing/settings'))
  async updateSettings(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() raw: unknown): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'PATCH', path: '/v1/billing/settings', actor, body: bodyOf(raw) });
  }

  /** Starts saving a card for automatic top-up (Stripe Checkout in setup mode): a person on Stripe's page, so the dashboard starts it. */
  @Post(onDashboard('billing/auto-topup/setup'))
  async setupAutoTopup(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res() reply: FastifyReply, @Body() raw: unknown): Promise<void> {
    await relayToBilling(this.billing, req, reply, { method: 'POST', path: '/v1/billing/auto-topup/setup', actor, body: bodyOf(raw) });
  }
}
