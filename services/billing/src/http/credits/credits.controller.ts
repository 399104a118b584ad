import { Get, Inject, Req } from '@nestjs/common';
import { microsToUsd } from '@svc/money';
import type { FastifyRequest } from 'fastify';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { LedgerService } from '../../services/ledger/ledger.service';

export interface CreditsView {
  balance_usd: number;
  reserved_usd: number;
  total_purchased_usd: number;
  total_spent_usd: number;
  request_id: string;
}

/** GET /v1/credits, forwarded by the gateway for either kind of key. */
@InternalAuthController('v1/credits', { key: 'either' })
export class CreditsController {
  constructor(@Inject(LedgerService) private readonly ledger: LedgerService) {}

  @Get()
  async credits(@Caller() caller: CallerIdentity, @Req() request: FastifyRequest): Promise<CreditsView> {
    // balance_usd is the spendable balance (Redis) when known, else the durable one: see CreditsRecord.
    const balance = await this.ledger.creditsOf(caller.accountId);
    return {
      balance_usd: microsToUsd(balance.balanceMicros),
      reserved_usd: microsToUsd(balance.reservedMicros),
      total_purchased_usd: microsToUsd(balance.totalPurchasedMicros),
      total_spent_usd: microsToUsd(balance.totalSpentMicros),
      request_id: request.id,
    };
  }
}
