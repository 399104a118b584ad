import { Body, Controller, Delete, Get, Inject, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InternalAuth } from '../http/internal-auth';
import { withRequestId } from '../http/reply';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { PutProviderKeyDto } from './provider-keys.dto';
import { markChangedProviderKeys } from './provider-keys.reply';
import { ProviderKeysService } from './provider-keys.service';

/** /v1/provider-keys (management key only), forwarded by the gateway after authentication. */
@Controller('v1/provider-keys')
export class ProviderKeysController {
  constructor(
    @Inject(ProviderKeysService) private readonly providerKeys: ProviderKeysService,
    @Inject(InternalAuth) private readonly auth: InternalAuth,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  async list(@Req() req: FastifyRequest): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    return withRequestId(req, this.logger, await this.providerKeys.list(caller.accountId));
  }

  @Get(':provider')
  async get(@Req() req: FastifyRequest, @Param('provider') provider: string): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    return withRequestId(req, this.logger, await this.providerKeys.get(caller.accountId, provider));
  }

  @Put(':provider')
  async put(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string, @Body() body: PutProviderKeyDto): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    const result = await this.providerKeys.put(caller.accountId, provider, body.key);
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, this.logger, result.value);
  }

  @Delete(':provider')
  async remove(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    const result = await this.providerKeys.remove(caller.accountId, provider);
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, this.logger, result.value);
  }
}
