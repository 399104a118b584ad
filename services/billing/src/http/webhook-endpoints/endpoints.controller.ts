import { Body, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { PageQueryDto } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import { EndpointsService } from '../../services/outbound-webhooks/endpoints.service';
import type { DeliveryRow, EndpointRow } from '../../stores/webhook-endpoints.repository';
import { encodeCursor, toHistoryPage } from '../../common/pages';
import { auditActorOf } from '../audit-actor';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { CreateEndpointDto, UpdateEndpointDto } from './endpoints.dto';

export interface EndpointView {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  events: string[];
  enabled: boolean;
  /** `failing` when billing disabled the endpoint after 24 hours of failed deliveries; else null. */
  disabled_reason: string | null;
  /** When the endpoint started failing (null while deliveries succeed). */
  failing_since: string | null;
  /** Until when the previous secret still signs (a second v1), after a rotation. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export function endpointView(row: EndpointRow, now = new Date()): EndpointView {
  const overlap = row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now ? row.previousSecretExpiresAt.toISOString() : null;
  return {
    id: row.id, object: 'webhook_endpoint', url: row.url, events: row.events, enabled: row.enabled, disabled_reason: row.disabledReason,
    failing_since: row.failingSince?.toISOString() ?? null, previous_secret_expires_at: overlap,
    created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(),
  };
}

function deliveryView(row: DeliveryRow): object {
  return {
    id: row.id, event_id: row.eventId, event_type: row.eventType, status: row.status, attempt_count: row.attempts,
    created_at: row.createdAt.toISOString(), last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
    attempts: row.history.map((a) => ({
      attempted_at: a.attemptedAt.toISOString(), status_code: a.statusCode, error: a.error, duration_ms: a.durationMs, response_head: a.responseHead,
    })),
  };
}

/**
 * The account's webhook endpoints (docs/api.md, "Events and webhooks"), management access:
 * a management key through the gateway, or a dashboard session through account-admin
 * (decision 0015). The signing secret is answered once, at creation and at each rotation.
 * Every change is in the audit log (EndpointsService).
 */
@InternalAuthController('v1/webhook-endpoints', { key: 'management' })
export class WebhookEndpointsController {
  constructor(@Inject(EndpointsService) private readonly endpoints: EndpointsService) {}

  @Post()
  @HttpCode(201)
  async create(@Caller() caller: CallerIdentity, @Body() body: CreateEndpointDto, @Req() request: FastifyRequest): Promise<object> {
    const created = await this.endpoints.create(caller.accountId, { url: body.url, events: body.events, enabled: body.enabled ?? true }, auditActorOf(caller, request));
    request.log.info({ account_id: caller.accountId, endpoint_id: created.id }, 'webhook endpoint created');
    return { ...endpointView(created), secret: created.secret, request_id: request.id };
  }

  @Get()
  async list(@Caller() caller: CallerIdentity, @Query() query: PageQueryDto, @Req() request: FastifyRequest): Promise<object> {
    const page = await this.endpoints.list(caller.accountId, toHistoryPage(query));
    const last = page.rows[page.rows.length - 1];
    return { data: page.rows.map((r) => endpointView(r)), next_cursor: page.more && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  @Get(':id')
  async get(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    return { ...endpointView(await this.endpoints.get(caller.accountId, id)), request_id: request.id };
  }

  @Patch(':id')
  async update(@Caller() caller: CallerIdentity, @Param('id') id: string, @Body() body: UpdateEndpointDto, @Req() request: FastifyRequest): Promise<object> {
    const updated = await this.endpoints.update(caller.accountId, id, body, auditActorOf(caller, request));
    return { ...endpointView(updated), request_id: request.id };
  }

  @Delete(':id')
  async remove(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    await this.endpoints.remove(caller.accountId, id, auditActorOf(caller, request));
    return { id, deleted: true, request_id: request.id };
  }

  /** A new secret, answered once; the old one keeps signing (a second v1) for 24 hours. */
  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    const rotated = await this.endpoints.rotate(caller.accountId, id, auditActorOf(caller, request));
    request.log.info({ account_id: caller.accountId, endpoint_id: id }, 'webhook secret rotated');
    return { ...endpointView(rotated), secret: rotated.secret, request_id: request.id };
  }

  /** The endpoint's deliveries, newest first, each with every attempt. */
  @Get(':id/deliveries')
  async deliveries(@Caller() caller: CallerIdentity, @Param('id') id: string, @Query() query: PageQueryDto, @Req() request: FastifyRequest): Promise<object> {
    const page = await this.endpoints.deliveries(caller.accountId, id, toHistoryPage(query));
    const last = page.rows[page.rows.length - 1];
    return { data: page.rows.map(deliveryView), next_cursor: page.more && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  /** Sends a delivery again (whatever its state), with a fresh 24-hour retry window. */
  @Post(':id/deliveries/:delivery/redeliver')
  @HttpCode(202)
  async redeliver(@Caller() caller: CallerIdentity, @Param('id') id: string, @Param('delivery') delivery: string, @Req() request: FastifyRequest): Promise<object> {
    await this.endpoints.redeliver(caller.accountId, id, delivery);
    return { id: delivery, status: 'pending', request_id: request.id };
  }
}
