import { Body, Get, Inject, Patch, Req } from '@nestjs/common';
import { microsToUsd, usdToMicros } from '@svc/money';
import type { FastifyRequest } from 'fastify';
import { requireManagement } from '../events/events.controller';
import { Caller, InternalAuthController } from '../http/internal-auth.guard';
import type { CallerIdentity } from '../http/internal-auth.guard';
import { BillingSettingsDto } from './settings.dto';
import { SettingsRepository } from './settings.repository';
import type { SettingsRow } from './settings.repository';

export interface BillingSettingsView {
  low_balance_threshold_usd: number | null;
  request_id: string;
}

const view = (row: SettingsRow, requestId: string): BillingSettingsView => ({
  low_balance_threshold_usd: row.lowBalanceThresholdMicros === null ? null : microsToUsd(row.lowBalanceThresholdMicros),
  request_id: requestId,
});

/** GET and PATCH /v1/billing/settings (management access; the dashboard through account-admin). */
@InternalAuthController('v1/billing/settings')
export class BillingSettingsController {
  constructor(@Inject(SettingsRepository) private readonly settings: SettingsRepository) {}

  @Get()
  async get(@Caller() caller: CallerIdentity, @Req() request: FastifyRequest): Promise<BillingSettingsView> {
    requireManagement(caller, 'billing settings');
    return view(await this.settings.get(caller.accountId), request.id);
  }

  @Patch()
  async update(@Caller() caller: CallerIdentity, @Body() body: BillingSettingsDto, @Req() request: FastifyRequest): Promise<BillingSettingsView> {
    requireManagement(caller, 'billing settings');
    if (body.low_balance_threshold_usd === undefined) return view(await this.settings.get(caller.accountId), request.id);
    const micros = body.low_balance_threshold_usd === null ? null : usdToMicros(body.low_balance_threshold_usd);
    return view(await this.settings.setLowBalanceThreshold(caller.accountId, micros), request.id);
  }
}
