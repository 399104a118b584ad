import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { markChangedKey, withRequestId } from '../http/reply';
import { KeyBodyDto, ListQueryDto, toKeyInput, toListQuery } from '../keys/keys.dto';
import { KeysService } from '../keys/keys.service';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { ManagementKeyUpdateDto } from './management-key-update.dto';
import { SessionGuardService } from './session-guard.service';

/**
 * The dashboard's API keys, acting for the signed-in user's account: the same bodies,
 * validation, answers and error codes as /v1/keys (CSRF header on every change), plus the
 * management-key edit the key table needs.
 */
@Controller('dashboard/api')
export class SessionKeysController {
  constructor(
    @Inject(SessionGuardService) private readonly sessions: SessionGuardService,
    @Inject(KeysService) private readonly keys: KeysService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Post('keys')
  @HttpCode(201)
  async create(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: KeyBodyDto): Promise<object> {
    const actor = await this.sessions.forChange(req);
    const input = toKeyInput(body);
    const result = await this.keys.createApiKey(actor.accountId, input);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Get('keys')
  async list(@Req() req: FastifyRequest, @Query() query: ListQueryDto): Promise<object> {
    const actor = await this.sessions.forRead(req);
    return withRequestId(req, this.logger, await this.keys.listApiKeys(actor.accountId, toListQuery(query)));
  }

  @Get('keys/:id')
  async get(@Req() req: FastifyRequest, @Param('id') id: string): Promise<object> {
    const actor = await this.sessions.forRead(req);
    return withRequestId(req, this.logger, await this.keys.getApiKey(actor.accountId, id));
  }

  @Patch('keys/:id')
  async update(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string, @Body() body: KeyBodyDto): Promise<object> {
    const actor = await this.sessions.forChange(req);
    const input = toKeyInput(body);
    const result = await this.keys.updateApiKey(actor.accountId, id, input);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Delete('keys/:id')
  async remove(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<object> {
    const actor = await this.sessions.forChange(req);
    const result = await this.keys.deleteApiKey(actor.accountId, id);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Patch('management-keys/:id')
  async updateManagementKey(
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
    @Body() body: ManagementKeyUpdateDto,
  ): Promise<object> {
    const actor = await this.sessions.forChange(req);
    const changes: { name?: string; disabled?: boolean } = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.disabled !== undefined) changes.disabled = body.disabled;
    const result = await this.keys.updateManagementKey(actor.accountId, id, changes);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }
}
