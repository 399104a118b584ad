import { Body, Controller, Delete, Get, Inject, Param, Put, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardService } from '../dashboard/dashboard.service';
import { withRequestId } from '../http/reply';
import { headerOf } from '../http/request-context';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { PutProviderKeyDto } from './provider-keys.dto';
import { markChangedProviderKeys } from './provider-keys.reply';
import { ProviderKeysService } from './provider-keys.service';

/**
 * The dashboard's session mirror of /v1/provider-keys: the same bodies, answers, validation
 * and error codes, for the signed-in user's account; mutations need x-csrf-token.
 */
@Controller('dashboard/api/provider-keys')
export class ProviderKeysDashboardController {
  constructor(
    @Inject(ProviderKeysService) private readonly providerKeys: ProviderKeysService,
    @Inject(DashboardService) private readonly dashboard: DashboardService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get()
  async list(@Req() req: FastifyRequest): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    return withRequestId(req, this.logger, await this.providerKeys.list(session.user.accountId));
  }

  @Get(':provider')
  async get(@Req() req: FastifyRequest, @Param('provider') provider: string): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    return withRequestId(req, this.logger, await this.providerKeys.get(session.user.accountId, provider));
  }

  @Put(':provider')
  async put(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string, @Body() body: PutProviderKeyDto): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    this.dashboard.requireCsrf(session, headerOf(req, 'x-csrf-token'));
    const result = await this.providerKeys.put(session.user.accountId, provider, body.key);
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, this.logger, result.value);
  }

  @Delete(':provider')
  async remove(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('provider') provider: string): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    this.dashboard.requireCsrf(session, headerOf(req, 'x-csrf-token'));
    const result = await this.providerKeys.remove(session.user.accountId, provider);
    markChangedProviderKeys(reply, result.changedAccountId);
    return withRequestId(req, this.logger, result.value);
  }
}
