import { auditActorOf } from '../audit/audit-actor';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { Body, Delete, Get, Inject, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Actor, onBoth, AccessController } from '../http/actor';
import { withRequestId } from '../http/reply';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { PutProviderKeyDto } from './provider-keys.dto';
import { markChangedProviderKeys } from './provider-keys.reply';
import { ProviderKeysService } from './provider-keys.service';

/**
 * Provider keys on both surfaces: /v1/provider-keys (a management key, forwarded by the
 * gateway) and /dashboard/api/provider-keys (a session; x-csrf-token on every change).
 */
@AccessController({ key: 'management' })
export class ProviderKeysController {
  constructor(
    @Inject(ProviderKeysService) private readonly providerKeys: ProviderKeysService,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(onBoth('provider-keys'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest): Promise<object> {
    return withRequestId(req, this.logger, await this.providerKeys.list(actor.accountId));
  }

  @Get(onBoth('provider-keys/:provider'))
  async get(@Actor() actor: Actor, @Req() req: FastifyRequest, @Param('provider') provider: string): Promise<object> {
    return withRequestId(req, this.logger, await this.providerKeys.get(actor.accountId, provider));
  }

  @Put(onBoth('provider-keys/:provider'))
  async put(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string, @Body() body: PutProviderKeyDto): Promise<object> {
    const result = await this.providerKeys.put(actor.accountId, provider, body.key, auditActorOf(actor, req, this.logger, this.config));
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, this.logger, result.value);
  }

  @Delete(onBoth('provider-keys/:provider'))
  async remove(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string): Promise<object> {
    const result = await this.providerKeys.remove(actor.accountId, provider, auditActorOf(actor, req, this.logger, this.config));
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, this.logger, result.value);
  }
}
