import { Body, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { LIMITS } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { PageQueryDto } from '@svc/http-edge';
import { isId } from '@svc/ids';
import type { FastifyRequest } from 'fastify';
import { requireManagement } from '../events/events.controller';
import { encodeCursor, toHistoryPage } from '../../services/history/history-page';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { CreateEndpointDto, UpdateEndpointDto } from './endpoints.dto';
import { EndpointsRepository } from '../../stores/webhook-endpoints.repository';
import type { DeliveryRow, EndpointRow } from '../../stores/webhook-endpoints.repository';
import { refusedUrl } from '../../services/outbound-webhooks/url-policy';
import type { UrlPolicy } from '../../services/outbound-webhooks/url-policy';

export const WEBHOOK_URL_POLICY = Symbol('WEBHOOK_URL_POLICY');

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
 */
@InternalAuthController('v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(
    @Inject(EndpointsRepository) private readonly endpoints: EndpointsRepository,
    @Inject(WEBHOOK_URL_POLICY) private readonly policy: UrlPolicy,
  ) {}

  @Post()
  @HttpCode(201)
  async create(@Caller() caller: CallerIdentity, @Body() body: CreateEndpointDto, @Req() request: FastifyRequest): Promise<object> {
    this.checkUrl(body.url);
    requireManagement(caller, 'managing webhook endpoints');
    const created = await this.endpoints.create(caller.accountId, { url: body.url, events: body.events, enabled: body.enabled ?? true }, LIMITS.webhookEndpoints.max);
    if (created === null) throw new AppError('invalid_request', `an account has at most ${LIMITS.webhookEndpoints.max} webhook endpoints`);
    request.log.info({ account_id: caller.accountId, endpoint_id: created.id }, 'webhook endpoint created');
    return { ...endpointView(created), secret: created.secret, request_id: request.id };
  }

  @Get()
  async list(@Caller() caller: CallerIdentity, @Query() query: PageQueryDto, @Req() request: FastifyRequest): Promise<object> {
    const page = toHistoryPage(query);
    requireManagement(caller, 'managing webhook endpoints');
    const rows = await this.endpoints.list(caller.accountId, page.limit + 1, page.after);
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return { data: shown.map((r) => endpointView(r)), next_cursor: rows.length > page.limit && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  @Get(':id')
  async get(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    requireManagement(caller, 'managing webhook endpoints');
    return { ...endpointView(await this.found(caller, id)), request_id: request.id };
  }

  @Patch(':id')
  async update(@Caller() caller: CallerIdentity, @Param('id') id: string, @Body() body: UpdateEndpointDto, @Req() request: FastifyRequest): Promise<object> {
    if (body.url !== undefined) this.checkUrl(body.url);
    requireManagement(caller, 'managing webhook endpoints');
    const updated = isId('webhookEndpoint', id) ? await this.endpoints.update(caller.accountId, id, body) : null;
    if (updated === null) throw new AppError('not_found', 'no such webhook endpoint');
    return { ...endpointView(updated), request_id: request.id };
  }

  @Delete(':id')
  async remove(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    requireManagement(caller, 'managing webhook endpoints');
    const deleted = isId('webhookEndpoint', id) && (await this.endpoints.delete(caller.accountId, id));
    if (!deleted) throw new AppError('not_found', 'no such webhook endpoint');
    return { id, deleted: true, request_id: request.id };
  }

  /** A new secret, answered once; the old one keeps signing (a second v1) for 24 hours. */
  @Post(':id/rotate-secret')
  @HttpCode(200)
  async rotate(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    requireManagement(caller, 'managing webhook endpoints');
    const rotated = isId('webhookEndpoint', id) ? await this.endpoints.rotate(caller.accountId, id) : null;
    if (rotated === null) throw new AppError('not_found', 'no such webhook endpoint');
    request.log.info({ account_id: caller.accountId, endpoint_id: id }, 'webhook secret rotated');
    return { ...endpointView(rotated), secret: rotated.secret, request_id: request.id };
  }

  /** The endpoint's deliveries, newest first, each with every attempt. */
  @Get(':id/deliveries')
  async deliveries(@Caller() caller: CallerIdentity, @Param('id') id: string, @Query() query: PageQueryDto, @Req() request: FastifyRequest): Promise<object> {
    const page = toHistoryPage(query);
    requireManagement(caller, 'managing webhook endpoints');
    await this.found(caller, id);
    const rows = await this.endpoints.deliveries(caller.accountId, id, page.limit + 1, page.after);
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return { data: shown.map(deliveryView), next_cursor: rows.length > page.limit && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  /** Sends a delivery again (whatever its state), with a fresh 24-hour retry window. */
  @Post(':id/deliveries/:delivery/redeliver')
  @HttpCode(202)
  async redeliver(@Caller() caller: CallerIdentity, @Param('id') id: string, @Param('delivery') delivery: string, @Req() request: FastifyRequest): Promise<object> {
    requireManagement(caller, 'managing webhook endpoints');
    const queued = isId('webhookEndpoint', id) && isId('webhookDelivery', delivery) && (await this.endpoints.redeliver(caller.accountId, id, delivery));
    if (!queued) throw new AppError('not_found', 'no such delivery');
    return { id: delivery, status: 'pending', request_id: request.id };
  }

  private async found(caller: CallerIdentity, id: string): Promise<EndpointRow> {
    const row = isId('webhookEndpoint', id) ? await this.endpoints.get(caller.accountId, id) : null;
    if (row === null) throw new AppError('not_found', 'no such webhook endpoint');
    return row;
  }

  private checkUrl(url: string): void {
    const refused = refusedUrl(url, this.policy);
    if (refused !== null) throw new AppError('invalid_request', refused);
  }
}
