import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RequiredKind } from '@svc/contracts';
import { internalCaller } from '@svc/http-edge';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import type { Caller } from '../keys/keys.service';

/**
 * /v1 requests come from the gateway, which authenticated the key: the identity headers
 * are trusted only with the right internal token (@svc/http-edge's one check).
 */
@Injectable()
export class InternalAuth {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  caller(request: FastifyRequest, required: RequiredKind): Caller {
    return internalCaller(request.headers, this.config.INTERNAL_TOKEN, required);
  }
}
