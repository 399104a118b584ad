import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '@svc/http-edge';
import { Access, Actor, onDashboard } from '../http/actor';
import { withRequestId } from '../http/reply';
import { credentials, LoginDto, SignupDto } from './sessions.dto';
import type { Credentials } from './sessions.dto';
import { SessionsService } from './sessions.service';
import type { SignedIn } from './sessions.service';
import { SignInLimitService } from './sign-in-limit.service';

/** Dashboard sessions: sign-up and sign-in (public, rate-limited), sign-out and "who am I" (a session). */
@Controller()
export class SessionsController {
  constructor(
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(SignInLimitService) private readonly limits: SignInLimitService,
  ) {}

  @Post(onDashboard('signup'))
  @Public()
  @HttpCode(201)
  async signUp(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: SignupDto): Promise<object> {
    const input = await this.admitted(req, body);
    return this.signedIn(req, reply, await this.sessions.signUp(input));
  }

  @Post(onDashboard('login'))
  @Public()
  @HttpCode(200)
  async logIn(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: LoginDto): Promise<object> {
    const input = await this.admitted(req, body);
    const signedIn = await this.sessions.logIn(input);
    await this.limits.succeeded(input.email);
    return this.signedIn(req, reply, signedIn);
  }

  @Post(onDashboard('logout'))
  @Access()
  @HttpCode(204)
  async logOut(@Actor() actor: Actor, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    if (actor.via !== 'session') throw new Error('sign-out is served to sessions only');
    await this.sessions.logOut(actor.sessionId);
    void reply.header('set-cookie', this.sessions.clearedCookie());
  }

  @Get(onDashboard('me'))
  @Access()
  me(@Actor() actor: Actor, @Req() req: FastifyRequest): object {
    if (actor.via !== 'session') throw new Error('/dashboard/api/me is served to sessions only');
    return withRequestId(req, { account_id: actor.accountId, email: actor.email });
  }

  /** The body's credentials, once the attempt is within the sign-in limits (429 otherwise). */
  private async admitted(req: FastifyRequest, body: SignupDto | LoginDto): Promise<Credentials> {
    const input = credentials(body);
    await this.limits.admit(input.email, req);
    return input;
  }

  private signedIn(req: FastifyRequest, reply: FastifyReply, signedIn: SignedIn): object {
    void reply.header('set-cookie', this.sessions.sessionCookie(signedIn.sessionToken)).header('cache-control', 'no-store');
    return withRequestId(req, { account_id: signedIn.accountId, email: signedIn.email, csrf_token: signedIn.csrfToken });
  }
}
