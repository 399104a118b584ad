import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { INTERNAL_HEADERS } from '@svc/contracts';
import type { RequiredKind } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import type { Caller } from '../keys/keys.service';
import { contextOf, headerOf } from './request-context';

/**
 * /v1 requests come from the gateway, which authenticated the key. The identity headers are
 * trusted only with the right internal token; without it the caller is unknown (401).
 */
@Injectable()
export class InternalAuth {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  caller(request: FastifyRequest, required: RequiredKind): Caller {
    const context = contextOf(request, this.logger);
    if (!context.internal) throw new AppError('invalid_api_key', 'missing or invalid API key');
    const accountId = headerOf(request, INTERNAL_HEADERS.accountId);
    const keyId = headerOf(request, INTERNAL_HEADERS.keyId);
    const kind = headerOf(request, INTERNAL_HEADERS.keyKind);
    if (!isId('account', accountId) || keyId === undefined || (kind !== 'api' && kind !== 'management')) {
      throw new AppError('invalid_api_key', 'missing or invalid API key');
    }
    if (!isId(kind === 'api' ? 'apiKey' : 'managementKey', keyId)) throw new AppError('invalid_api_key', 'missing or invalid API key');
    if (required !== 'either' && required !== kind) {
      throw new AppError('wrong_key_type', required === 'management' ? 'this endpoint needs a management key' : 'this endpoint needs an API key');
    }
    return { accountId, keyId, kind };
  }
}
