import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { markChangedKey, withRequestId } from '../http/reply';
import { headerOf } from '../http/request-context';
import { KeysService } from '../keys/keys.service';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { credentials, LoginDto, ManagementKeyCreateDto, SignupDto } from './dashboard.dto';
import { DashboardService } from './dashboard.service';
import { SignInLimitService } from './sign-in-limit.service';
import { clientAddress } from '../http/client-address';
import type { SignedIn } from './dashboard.service';

/** The dashboard page and its JSON API (session cookie + x-csrf-token, never keys). */
@Controller('dashboard')
export class DashboardController {
  constructor(
    @Inject(DashboardService) private readonly dashboard: DashboardService,
    @Inject(KeysService) private readonly keys: KeysService,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(SignInLimitService) private readonly limits: SignInLimitService,
  ) {}

  @Post('api/signup')
  @HttpCode(201)
  async signUp(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: SignupDto): Promise<object> {
    const input = credentials(body);
    await this.limits.admit(input.email, clientAddress(req, this.logger));
    const signedIn = await this.dashboard.signUp(input);
    return this.signedIn(req, reply, signedIn);
  }

  @Post('api/login')
  @HttpCode(200)
  async logIn(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: LoginDto): Promise<object> {
    const input = credentials(body);
    await this.limits.admit(input.email, clientAddress(req, this.logger));
    const signedIn = await this.dashboard.logIn(input);
    await this.limits.succeeded(input.email);
    return this.signedIn(req, reply, signedIn);
  }

  @Post('api/logout')
  @HttpCode(204)
  async logOut(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    this.dashboard.requireCsrf(session, headerOf(req, 'x-csrf-token'));
    await this.dashboard.logOut(session);
    void reply.header('set-cookie', this.dashboard.clearedCookie());
  }

  @Get('api/me')
  async me(@Req() req: FastifyRequest): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    return withRequestId(req, this.logger, { account_id: session.user.accountId, email: session.user.email });
  }

  @Post('api/management-keys')
  @HttpCode(201)
  async createManagementKey(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: ManagementKeyCreateDto): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    this.dashboard.requireCsrf(session, headerOf(req, 'x-csrf-token'));
    const result = await this.keys.createManagementKey(session.user.accountId, body.name ?? '');
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  @Get('api/management-keys')
  async listManagementKeys(@Req() req: FastifyRequest): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    return withRequestId(req, this.logger, await this.keys.listManagementKeys(session.user.accountId));
  }

  @Delete('api/management-keys/:id')
  async deleteManagementKey(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<object> {
    const session = await this.dashboard.session(headerOf(req, 'cookie'));
    this.dashboard.requireCsrf(session, headerOf(req, 'x-csrf-token'));
    const result = await this.keys.deleteManagementKey(session.user.accountId, id);
    markChangedKey(reply, result.changedKeyHash);
    return withRequestId(req, this.logger, result.value);
  }

  private signedIn(req: FastifyRequest, reply: FastifyReply, signedIn: SignedIn): object {
    void reply.header('set-cookie', this.dashboard.sessionCookie(signedIn.sessionToken)).header('cache-control', 'no-store');
    return withRequestId(req, this.logger, { account_id: signedIn.accountId, email: signedIn.email, csrf_token: signedIn.csrfToken });
  }
}
