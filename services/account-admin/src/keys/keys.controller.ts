import { Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res, Body } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InternalAuth } from '../http/internal-auth';
import { markChangedKey, withRequestId } from '../http/reply';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { KeyBodyDto, ListQueryDto, toKeyInput, toListQuery } from './keys.dto';
import { KeysService } from './keys.service';

/** API keys (management key only) and the calling key itself (either kind). */
@Controller('v1')
export class KeysController {
  constructor(
    @Inject(KeysService) private readonly keys: KeysService,
    @Inject(InternalAuth) private readonly auth: InternalAuth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Post('keys')
  @HttpCode(201)
  async create(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: KeyBodyDto): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    const input = toKeyInput(body);
    const result = await this.keys.createApiKey(caller.accountId, input);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Get('keys')
  async list(@Req() req: FastifyRequest, @Query() query: ListQueryDto): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    const page = await this.keys.listApiKeys(caller.accountId, toListQuery(query));
    return withRequestId(req, this.logger, page);
  }

  @Get('keys/:id')
  async get(@Req() req: FastifyRequest, @Param('id') id: string): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    return withRequestId(req, this.logger, await this.keys.getApiKey(caller.accountId, id));
  }

  @Patch('keys/:id')
  async update(
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: KeyBodyDto,
  ): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    const input = toKeyInput(body);
    const result = await this.keys.updateApiKey(caller.accountId, id, input);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Delete('keys/:id')
  async remove(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<object> {
    const caller = this.auth.caller(req, 'management');
    const result = await this.keys.deleteApiKey(caller.accountId, id);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Get('key')
  async self(@Req() req: FastifyRequest): Promise<object> {
    const caller = this.auth.caller(req, 'either');
    const view = await this.keys.self(caller);
    return withRequestId(req, this.logger, {
      ...view,
      rate_limit: { requests_per_second: this.config.RATE_LIMIT_PER_SECOND, burst: this.config.RATE_LIMIT_BURST },
    });
  }
}
