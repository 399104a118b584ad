import { createParamDecorator, Inject, Injectable } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { INTERNAL_HEADERS } from '@svc/contracts';
import { AppError } from '@svc/errors';
import type { FastifyRequest } from 'fastify';
import { headerValue, secretsEqual } from './constant-time';

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
    const headers = request.headers;
    if (!secretsEqual(headerValue(headers, INTERNAL_HEADERS.token), this.token)) {
      throw new AppError('invalid_api_key', 'missing or invalid API key');
    }
    const accountId = headerValue(headers, INTERNAL_HEADERS.accountId);
    const keyId = headerValue(headers, INTERNAL_HEADERS.keyId);
    const keyKind = headerValue(headers, INTERNAL_HEADERS.keyKind);
    if (accountId === undefined || accountId === '' || keyId === undefined || (keyKind !== 'api' && keyKind !== 'management')) {
      throw new AppError('invalid_api_key', 'missing or invalid API key');
    }
    identities.set(request, { accountId, keyId, keyKind });
    return true;
  }
}

/** The identity InternalAuthGuard admitted (use only on routes it guards). */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CallerIdentity => {
  const identity = identities.get(context.switchToHttp().getRequest<FastifyRequest>());
  if (identity === undefined) throw new Error('Caller used on a route without InternalAuthGuard');
  return identity;
});
