import { Body, Delete, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { auditActorOf } from '../audit/audit-actor';
import { AccessController, Actor, onDashboard } from '../http/actor';
import { markChangedKey, withRequestId } from '../http/reply';
import { AuthorizationService } from './authorization.service';
import { ConnectedAppsService } from './connected-apps.service';
import { ConsentDto, toApproveInput } from './oauth.dto';

/**
 * The owner's side of OAuth, on the dashboard only: a signed-in session (with x-csrf-token on
 * every change) approves or denies a pending authorization request for its own account, lists
 * the account's connected apps and revokes them. No /v1 route: a key, management or not,
 * can never approve. An approval and a revocation are audited with the session as the actor.
 */
@AccessController()
export class ConnectedAppsController {
  constructor(
    @Inject(AuthorizationService) private readonly authorization: AuthorizationService,
    @Inject(ConnectedAppsService) private readonly apps: ConnectedAppsService,
  ) {}

  @Get(onDashboard('oauth/requests/:id'))
  async request(@Req() req: FastifyRequest, @Param('id') id: string): Promise<object> {
    return withRequestId(req, await this.authorization.consentView(id));
  }

  @Post(onDashboard('oauth/requests/:id/approve'))
  @HttpCode(200)
  async approve(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string, @Body() body: ConsentDto): Promise<object> {
    const { keyHash, ...approved } = await this.authorization.approve(actor.accountId, id, toApproveInput(body), auditActorOf(actor));
    markChangedKey(reply, keyHash);
    return withRequestId(req, approved);
  }

  @Post(onDashboard('oauth/requests/:id/deny'))
  @HttpCode(200)
  async deny(@Req() req: FastifyRequest, @Param('id') id: string): Promise<object> {
    return withRequestId(req, await this.authorization.deny(id));
  }

  @Get(onDashboard('connected-apps'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest): Promise<object> {
    return withRequestId(req, await this.apps.list(actor.accountId));
  }

  @Delete(onDashboard('connected-apps/:id'))
  async revoke(@Actor() actor: Actor, @Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<object> {
    const { keyHash, ...revoked } = await this.apps.revoke(actor.accountId, id, auditActorOf(actor));
    markChangedKey(reply, keyHash);
    return withRequestId(req, revoked);
  }
}
