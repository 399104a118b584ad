import { applyDecorators, Controller, Inject, Injectable, UseGuards } from '@nestjs/common';
import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { AppError } from '@svc/errors';
import type { FastifyRequest } from 'fastify';
import { headerValue, secretsEqual } from '@svc/http-edge';

export const OPERATOR_TOKEN = Symbol('OPERATOR_TOKEN');

/** Every operator route: `Authorization: Bearer <OPERATOR_TOKEN>`, compared in constant time. */
@Injectable()
export class OperatorAuthGuard implements CanActivate {
  constructor(@Inject(OPERATOR_TOKEN) private readonly token: string) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const match = /^Bearer (\S+)$/.exec(headerValue(request.headers, 'authorization') ?? '');
    if (match === null || !secretsEqual(match[1], this.token)) {
      throw new AppError('invalid_api_key', 'missing or wrong operator token (Authorization: Bearer <OPERATOR_TOKEN>)');
    }
    return true;
  }
}

/** `@Controller(prefix)` behind OperatorAuthGuard: a controller of operator routes only. */
export function OperatorAuthController(prefix: string): ClassDecorator {
  return applyDecorators(Controller(prefix), UseGuards(OperatorAuthGuard));
}
