import { applyDecorators, Controller, createParamDecorator, Inject, Injectable, UseGuards } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { internalCaller } from '@svc/http-edge';
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
 * Public routes (forwarded by the gateway): the identity headers are trusted only with the
 * shared internal token; without it, or without an identity, the caller is 401 invalid_api_key.
 */
@Injectable()
export class InternalAuthGuard implements CanActivate {
  constructor(@Inject(INTERNAL_TOKEN) private readonly token: string) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const caller = internalCaller(request.headers, this.token, 'either');
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

/** `@Controller(prefix)` behind InternalAuthGuard: routes the gateway forwards, or internal ones. */
export function InternalAuthController(prefix?: string): ClassDecorator {
  return applyDecorators(prefix === undefined ? Controller() : Controller(prefix), UseGuards(InternalAuthGuard));
}
