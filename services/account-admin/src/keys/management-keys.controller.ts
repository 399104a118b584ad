import { Body, Delete, Get, HttpCode, Inject, Param, Patch, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Actor, onDashboard, AccessController } from '../http/actor';
import { markChangedKey, withRequestId } from '../http/reply';
import { ManagementKeyCreateDto, ManagementKeyUpdateDto } from './management-keys.dto';
import { KeysService } from './keys.service';
import { auditActorOf } from '../audit/audit-actor';

/** Management keys: the dashboard only (a session; x-csrf-token on every change). */
@AccessController()
export class ManagementKeysController {
  constructor(@Inject(KeysService) private readonly keys: KeysService) {}

  @Post(onDashboard('management-keys'))
  @HttpCode(201)
  async create(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: ManagementKeyCreateDto): Promise<object> {
    const result = await this.keys.createManagementKey(actor.accountId, body.name ?? '', auditActorOf(actor));
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, result.value);
  }

  @Get(onDashboard('management-keys'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest): Promise<object> {
    return withRequestId(req, await this.keys.listManagementKeys(actor.accountId));
  }

  @Patch(onDashboard('management-keys/:id'))
  async update(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string, @Body() body: ManagementKeyUpdateDto): Promise<object> {
    const changes: { name?: string; disabled?: boolean } = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.disabled !== undefined) changes.disabled = body.disabled;
    const result = await this.keys.updateManagementKey(actor.accountId, id, changes, auditActorOf(actor));
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, result.value);
  }

  @Delete(onDashboard('management-keys/:id'))
  async remove(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<object> {
    const result = await this.keys.deleteManagementKey(actor.accountId, id, auditActorOf(actor));
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, result.value);
  }
}
