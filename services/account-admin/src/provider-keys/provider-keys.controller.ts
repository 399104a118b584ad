import { auditActorOf } from '../audit/audit-actor';
import { Body, Delete, Get, Inject, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Actor, onBoth, AccessController } from '../http/actor';
import { withRequestId } from '../http/reply';
import { PutProviderKeyDto } from './provider-keys.dto';
import { markChangedProviderKeys } from './provider-keys.reply';
import { ProviderKeysService } from './provider-keys.service';

/**
 * Provider keys on both surfaces: /v1/provider-keys (a management key, forwarded by the
 * gateway) and /dashboard/api/provider-keys (a session; x-csrf-token on every change).
 */
@AccessController({ key: 'management' })
export class ProviderKeysController {
  constructor(@Inject(ProviderKeysService) private readonly providerKeys: ProviderKeysService) {}

  @Get(onBoth('provider-keys'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest): Promise<object> {
    return withRequestId(req, await this.providerKeys.list(actor.accountId));
  }

  @Get(onBoth('provider-keys/:provider'))
  async get(@Actor() actor: Actor, @Req() req: FastifyRequest, @Param('provider') provider: string): Promise<object> {
    return withRequestId(req, await this.providerKeys.get(actor.accountId, provider));
  }

  @Put(onBoth('provider-keys/:provider'))
  async put(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string, @Body() body: PutProviderKeyDto): Promise<object> {
    const result = await this.providerKeys.put(actor.accountId, provider, body.key, auditActorOf(actor));
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, result.value);
  }

  @Delete(onBoth('provider-keys/:provider'))
  async remove(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string): Promise<object> {
    const result = await this.providerKeys.remove(actor.accountId, provider, auditActorOf(actor));
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, result.value);
  }
}
