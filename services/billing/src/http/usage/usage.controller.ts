import { Get, Inject, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { toUsageQuery, UsageQueryDto, usageView } from './usage.dto';
import type { UsageView } from './usage.dto';
import { UsageService } from '../../services/usage/usage.service';

/** GET /v1/usage, forwarded by the gateway for either kind of key. */
@InternalAuthController('v1/usage', { key: 'either' })
export class UsageController {
  constructor(@Inject(UsageService) private readonly usage: UsageService) {}

  @Get()
  async read(@Caller() caller: CallerIdentity, @Query() query: UsageQueryDto, @Req() request: FastifyRequest): Promise<UsageView> {
    const parsed = toUsageQuery(query);
    return usageView(await this.usage.report(caller, parsed), request.id);
  }
}
