import { applyDecorators, Controller, createParamDecorator, Inject, Injectable, UseGuards } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { RequiredKind } from '@svc/contracts';
import { declaredAccess, DeclareAccess, internalCaller, KeyedGuard } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';

export const INTERNAL_TOKEN = Symbol('INTERNAL_TOKEN');

/** The key the gateway authenticated, as it forwarded it. */
export interface CallerIdentity {
  accountId: string;
  keyId: string;
  keyKind: 'api' | 'management';
}

const identities = new WeakMap<FastifyRequest, CallerIdentity>();

/**
 * Public routes (forwarded by the gateway) and internal ones: the identity headers are trusted
 * only with the shared internal token; without it, or without an identity, the caller is 401
 * invalid_api_key. The key kind the route declared (`@InternalAuthController(prefix, { key })`,
 * or a handler's `@DeclareAccess`) is checked here, before any pipe or handler: another kind
 * is 403 wrong_key_type (docs/decisions/0039).
 */
@Injectable()
@KeyedGuard()
export class InternalAuthGuard implements CanActivate {
  constructor(@Inject(INTERNAL_TOKEN) private readonly token: string) {}

  canActivate(context: ExecutionContext): boolean {
    const rule = declaredAccess(context.getClass(), context.getHandler());
    if (rule?.key === undefined) throw new Error(`${context.getClass().name}.${context.getHandler().name} declares no key kind`);
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const caller = internalCaller(request.headers, this.token, rule.key);
    identities.set(request, { accountId: caller.accountId, keyId: caller.keyId, keyKind: caller.kind });
    return true;
  }
}

/** The identity InternalAuthGuard admitted (use only on routes it guards). */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CallerIdentity => {
  const identity = identities.get(context.switchToHttp().getRequest<FastifyRequest>());
  if (identity === undefined) throw new Error('Caller used on a route without InternalAuthGuard');
  return identity;
});

/**
 * `@Controller(prefix)` behind InternalAuthGuard, with the kind of key every route of it
 * needs: routes the gateway forwards, or internal ones. Declared here once per controller;
 * a handler that differs declares its own with `@DeclareAccess({ key })`.
 */
export function InternalAuthController(prefix: string, access: { key: RequiredKind }): ClassDecorator {
  return applyDecorators(Controller(prefix), DeclareAccess(access), UseGuards(InternalAuthGuard));
}
