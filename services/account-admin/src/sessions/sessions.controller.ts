import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { FastifyRequest, FastifyReply } from 'fastify';
import { Public } from '@svc/http-edge';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { Access, Actor, onDashboard } from '../http/actor';
import { clientAddress } from '../http/client-address';
import { withRequestId } from '../http/reply';
import { ConfirmSignupDto, credentials, LoginDto, normalEmail, PasswordResetDto, PasswordResetRequestDto, SignupDto } from './sessions.dto';
import type { Credentials } from './sessions.dto';
import { SessionsService } from './sessions.service';
import type { SignedIn } from './sessions.service';
import { SignInLimitService } from './sign-in-limit.service';

/**
 * Dashboard sessions: sign-up (with or without a confirmation mail), its confirmation, sign-in,
 * password reset by mail (public, rate-limited), sign-out and "who am I" (a session).
 */
@Controller()
export class SessionsController {
  constructor(
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(SignInLimitService) private readonly limits: SignInLimitService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * SIGNUP_CONFIRMATION=off: 201 and a session at once. `required`: 202 "check your email",
   * the same answer for a new and a registered address (docs/decisions/0055).
   */
  @Post(onDashboard('signup'))
  @Public()
  @HttpCode(201)
  async signUp(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: SignupDto): Promise<object> {
    const input = await this.admitted(req, body);
    if (!this.sessions.confirmationRequired) return this.signedIn(req, reply, await this.sessions.signUp(input));
    await this.limits.admitSignupMail(input.email, req);
    await this.sessions.requestSignUp(input);
    void reply.status(202).header('cache-control', 'no-store');
    return withRequestId(req, checkEmail(input.email));
  }

  /** Uses the link of a confirmation mail; the account can sign in from now on. */
  @Post(onDashboard('signup/confirm'))
  @Public()
  @HttpCode(200)
  async confirmSignUp(@Req() req: FastifyRequest, @Body() body: ConfirmSignupDto): Promise<object> {
    const confirmed = await this.sessions.confirmSignUp(body.token);
    return withRequestId(req, { email: confirmed.email, confirmed: true });
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

  /** Mails a reset link to a registered address, a "no account" note to another: the same answer either way. */
  @Post(onDashboard('password-reset'))
  @Public()
  @HttpCode(202)
  async requestPasswordReset(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: PasswordResetRequestDto): Promise<object> {
    const email = normalEmail(body.email);
    await this.limits.admitPasswordReset(email, req);
    await this.sessions.requestPasswordReset(email);
    void reply.header('cache-control', 'no-store');
    return withRequestId(req, checkEmail(email));
  }

  /** Uses a reset link: sets the password, ends every other session, signs in. */
  @Post(onDashboard('password-reset/confirm'))
  @Public()
  @HttpCode(200)
  async resetPassword(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: PasswordResetDto): Promise<object> {
    const signedIn = await this.sessions.resetPassword(body.token, body.password, clientAddress(req, this.config.TRUSTED_PROXIES));
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

/** The answer of a sign-up with confirmation and of a reset request, whoever the address belongs to. */
function checkEmail(email: string): { status: 'check_email'; email: string } {
  return { status: 'check_email', email };
}
