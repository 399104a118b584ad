import { applyDecorators, Controller, createParamDecorator, Inject, Injectable, UseGuards } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { RequiredKind } from '@svc/contracts';
import type { KeyKind } from '@svc/keys';
import { DeclareAccess, internalCaller, KeyedGuard, ROUTE_ACCESS } from '@svc/http-edge';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { clientAddress } from './client-address';
import { headerOf } from './request-context';

/**
 * Who a request acts for, resolved once by ActorGuard before any pipe or handler runs:
 *  - `key`: a /v1 route the gateway forwarded after authenticating the key (its identity
 *    headers, trusted only with the internal token);
 *  - `session`: a /dashboard/api route, the signed-in user's session cookie (every change
 *    also needs x-csrf-token). A session acts with management authority on its account.
 */
export type Actor = KeyActor | SessionActor;

export interface KeyActor {
  via: 'key';
  accountId: string;
  keyId: string;
  kind: KeyKind;
  /** The client's address (http/client-address.ts), for the audit log and billing's relay. */
  clientAddress: string;
}

export interface SessionActor {
  via: 'session';
  accountId: string;
  userId: string;
  email: string;
  /** The session row's id (sign-out deletes it). */
  sessionId: string;
  /** The client's address (http/client-address.ts), for the audit log and billing's relay. */
  clientAddress: string;
}

/** The session half of the guard, implemented by the sessions module (src/sessions). */
export interface SessionResolver {
  /** The live session of a Cookie header, or AppError 401 "not signed in". */
  resolve(cookieHeader: string | undefined): Promise<{ sessionId: string; accountId: string; userId: string; email: string; csrfToken: string }>;
  /** AppError 400 unless the header equals the session's CSRF token. */
  requireCsrf(session: { csrfToken: string }, header: string | undefined): void;
}
export const SESSION_RESOLVER = Symbol('SESSION_RESOLVER');

/** The two surfaces one handler serves: the gateway-forwarded API and the dashboard's. */
export const V1 = 'v1';
export const DASHBOARD_API = 'dashboard/api';

/** A route path on both surfaces: `/v1/<path>` and `/dashboard/api/<path>`. */
export function onBoth(path: string): string[] {
  return [`${V1}/${path}`, `${DASHBOARD_API}/${path}`];
}

/** A route path on the dashboard only (`/dashboard/api/<path>`). */
export function onDashboard(path: string): string {
  return `${DASHBOARD_API}/${path}`;
}

/** A route path on /v1 only. */
export function onV1(path: string): string {
  return `${V1}/${path}`;
}

interface AccessRule {
  /** The key kind a /v1 route needs; a route on the dashboard only leaves it out (it needs a session). */
  key?: RequiredKind;
}

/**
 * Guards a controller or handler with ActorGuard: on /v1 a key of `key` kind, on
 * /dashboard/api a session (with x-csrf-token unless GET). Put it on the class and read the
 * caller with `@Actor()`; a handler may narrow the class's rule with its own `@Access`.
 */
export function Access(rule: AccessRule = {}): ClassDecorator & MethodDecorator {
  return applyDecorators(DeclareAccess(rule), UseGuards(ActorGuard));
}

/** `@Controller()` and `@Access(rule)` in one: a controller whose every route resolves its caller. */
export function AccessController(rule: AccessRule = {}): ClassDecorator {
  return applyDecorators(Controller(), Access(rule));
}

const actors = new WeakMap<FastifyRequest, Actor>();
const READS = new Set(['GET', 'HEAD']);

@Injectable()
@KeyedGuard()
export class ActorGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(SESSION_RESOLVER) private readonly sessions: SessionResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ROUTE_ACCESS, [context.getHandler(), context.getClass()]);
    if (rule === undefined) throw new Error('ActorGuard on a route without @Access');
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // A handler's own @Access adds the guard a second time after the class's: resolve once.
    if (!actors.has(request)) actors.set(request, await this.resolve(request, rule));
    return true;
  }

  private async resolve(request: FastifyRequest, rule: AccessRule): Promise<Actor> {
    const route = request.routeOptions.url ?? '';
    if (route.startsWith(`/${DASHBOARD_API}/`)) {
      const session = await this.sessions.resolve(headerOf(request, 'cookie'));
      if (!READS.has(request.method)) this.sessions.requireCsrf(session, headerOf(request, 'x-csrf-token'));
      const { accountId, userId, email, sessionId } = session;
      return { via: 'session', accountId, userId, email, sessionId, clientAddress: this.addressOf(request) };
    }
    if (route.startsWith(`/${V1}/`) && rule.key !== undefined) {
      const caller = internalCaller(request.headers, this.config.INTERNAL_TOKEN, rule.key);
      return { via: 'key', accountId: caller.accountId, keyId: caller.keyId, kind: caller.kind, clientAddress: this.addressOf(request) };
    }
    throw new Error(`ActorGuard on ${route}, which is neither under /${DASHBOARD_API}/ nor under /${V1}/ with @Access({ key })`);
  }

  private addressOf(request: FastifyRequest): string {
    return clientAddress(request, this.config.TRUSTED_PROXIES);
  }
}

/** The caller ActorGuard resolved (only on routes with @Access). */
export const Actor = createParamDecorator((_data: unknown, context: ExecutionContext): Actor => {
  const actor = actors.get(context.switchToHttp().getRequest<FastifyRequest>());
  if (actor === undefined) throw new Error('@Actor() on a route without @Access');
  return actor;
});
