import { Body, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditActorOf } from '../audit/audit-actor';
import { Access, Actor, onBoth, onV1, AccessController } from '../http/actor';
import { markChangedKey, withRequestId } from '../http/reply';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { KeyBodyDto, ListQueryDto, toKeyInput, toListQuery } from './keys.dto';
import { KeysService } from './keys.service';

/**
 * API keys on both surfaces: /v1/keys (a management key, forwarded by the gateway) and
 * /dashboard/api/keys (a session; x-csrf-token on every change) — the same bodies,
 * validation, answers and error codes. Plus GET /v1/key, the calling key itself (either kind).
 */
@AccessController({ key: 'management' })
export class KeysController {
  constructor(
    @Inject(KeysService) private readonly keys: KeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post(onBoth('keys'))
  @HttpCode(201)
  async create(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: KeyBodyDto): Promise<object> {
    const result = await this.keys.createApiKey(actor.accountId, toKeyInput(body), auditActorOf(actor));
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, result.value);
  }

  @Get(onBoth('keys'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest, @Query() query: ListQueryDto): Promise<object> {
    return withRequestId(req, await this.keys.listApiKeys(actor.accountId, toListQuery(query)));
  }

  @Get(onBoth('keys/:id'))
  async get(@Actor() actor: Actor, @Req() req: FastifyRequest, @Param('id') id: string): Promise<object> {
    return withRequestId(req, await this.keys.getApiKey(actor.accountId, id));
  }

  @Patch(onBoth('keys/:id'))
  async update(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string, @Body() body: KeyBodyDto): Promise<object> {
    const result = await this.keys.updateApiKey(actor.accountId, id, toKeyInput(body), auditActorOf(actor));
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, result.value);
  }

  @Delete(onBoth('keys/:id'))
  async remove(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<object> {
    const result = await this.keys.deleteApiKey(actor.accountId, id, auditActorOf(actor));
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, result.value);
  }

  @Get(onV1('key'))
  @Access({ key: 'either' })
  async self(@Actor() actor: Actor, @Req() req: FastifyRequest): Promise<object> {
    if (actor.via !== 'key') throw new Error('GET /v1/key is served to keys only');
    const view = await this.keys.self(actor);
    return withRequestId(req, {
      ...view,
      rate_limit: { requests_per_second: this.config.RATE_LIMIT_PER_SECOND, burst: this.config.RATE_LIMIT_BURST },
    });
  }
}
