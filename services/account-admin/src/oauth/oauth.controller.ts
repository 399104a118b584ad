import { Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { OAUTH_LIMITS, OAUTH_PATHS } from '@svc/contracts';
import { PublicController } from '@svc/http-edge';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { clientAddress } from '../http/client-address';
import { AuthorizationService } from './authorization.service';
import { ClientRegistrationService } from './client-registration.service';
import { OAuthError } from './oauth-error';
import { OAuthLimitsService } from './oauth-limits.service';
import { TokensService } from './tokens.service';

/**
 * The authorization server's public endpoints (docs/decisions/0029-oauth-for-connectors.md),
 * reached through the gateway's forwarding. They answer in OAuth's own shapes (RFC 6749
 * section 5.2 errors, `Cache-Control: no-store` on tokens), not the platform's error body:
 * OAuth clients read `error` as a string. Token and revocation requests are form-encoded.
 * Registrations and authorization requests are limited per client address (429 `rate_limited`
 * with Retry-After); a registration's body is at most OAUTH_LIMITS.registrationBodyBytes.
 */
@PublicController()
export class OAuthController {
  constructor(
    @Inject(ClientRegistrationService) private readonly registration: ClientRegistrationService,
    @Inject(AuthorizationService) private readonly authorization: AuthorizationService,
    @Inject(TokensService) private readonly tokens: TokensService,
    @Inject(OAuthLimitsService) private readonly limits: OAuthLimitsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get(OAUTH_PATHS.serverMetadata.slice(1))
  metadata(@Res() reply: FastifyReply): FastifyReply {
    return reply.header('cache-control', 'public, max-age=3600').type('application/json').send(this.authorization.serverMetadata());
  }

  @Post(OAUTH_PATHS.register.slice(1))
  @HttpCode(201)
  async register(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    return this.answer(reply, async () => {
      const limit = await this.limits.admit('register', clientAddress(req, this.config.TRUSTED_PROXIES));
      if (!limit.admitted) throw new OAuthError('rate_limited', `too many client registrations from this address; try again in ${limit.retryAfterSeconds} s`, 429, limit.retryAfterSeconds);
      const text = typeof req.body === 'string' ? req.body : '';
      if (Buffer.byteLength(text, 'utf8') > OAUTH_LIMITS.registrationBodyBytes) {
        throw new OAuthError('invalid_client_metadata', `the registration body must be at most ${OAUTH_LIMITS.registrationBodyBytes} bytes`, 413);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new OAuthError('invalid_client_metadata', 'the body must be JSON');
      }
      return reply.code(201).header('cache-control', 'no-store').type('application/json').send(await this.registration.register(body));
    });
  }

  /** Every refusal is the platform's own page, never a redirect to the client (RFC 9700 section 4.11.2). */
  @Get(OAUTH_PATHS.authorize.slice(1))
  async authorize(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    const limit = await this.limits.admit('authorize', clientAddress(req, this.config.TRUSTED_PROXIES));
    if (!limit.admitted) return errorPage(reply, new OAuthError('rate_limited', `too many authorization requests from this address; try again in ${limit.retryAfterSeconds} s`, 429, limit.retryAfterSeconds));
    const query = singleValues(req.query);
    if (query === null) return errorPage(reply, new OAuthError('invalid_request', 'each parameter may appear once'));
    const outcome = await this.authorization.authorize(query);
    if (outcome.kind === 'refused') return errorPage(reply, outcome.error);
    return reply.code(302).header('location', outcome.location).header('cache-control', 'no-store').send();
  }

  @Post(OAUTH_PATHS.token.slice(1))
  @HttpCode(200)
  async token(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    return this.answer(reply, async () => {
      const form = formOf(req);
      const tokens = await this.tokens.token(form, clientAddress(req, this.config.TRUSTED_PROXIES));
      return reply.code(200).header('cache-control', 'no-store').header('pragma', 'no-cache').type('application/json').send(tokens);
    });
  }

  @Post(OAUTH_PATHS.revoke.slice(1))
  @HttpCode(200)
  async revoke(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<FastifyReply> {
    return this.answer(reply, async () => {
      await this.tokens.revoke(formOf(req), clientAddress(req, this.config.TRUSTED_PROXIES));
      return reply.code(200).header('cache-control', 'no-store').send();
    });
  }

  private async answer(reply: FastifyReply, run: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.retryAfterSeconds !== null) reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.code(error.status).header('cache-control', 'no-store').type('application/json').send(error.body());
    }
  }
}

/** A form body (RFC 6749 section 3.2: application/x-www-form-urlencoded); a parameter given twice is refused. */
function formOf(req: FastifyRequest): URLSearchParams {
  const type = String(req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '');
  const seen = new Set<string>();
  for (const name of form.keys()) {
    if (seen.has(name)) throw new OAuthError('invalid_request', `${name} appears more than once`);
    seen.add(name);
  }
  return form;
}

function singleValues(query: unknown): Record<string, string | undefined> | null {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') return null;
    out[name] = value;
  }
  return out;
}

/** A refusal of an authorization request: a small page for the person in the browser, never a redirect. */
function errorPage(reply: FastifyReply, error: OAuthError): FastifyReply {
  const text = `${error.error}: ${error.description}`.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
  if (error.retryAfterSeconds !== null) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .code(error.status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'")
    .type('text/html; charset=utf-8')
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization refused</title></head><body><h1>Authorization refused</h1><p>${text}</p></body></html>`);
}
