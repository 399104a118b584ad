import { Body, Get, HttpCode, Inject, Patch, Post, Req } from '@nestjs/common';
import { microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import type { AutoTopupSettings, AutoTopupSetup, BillingSettings } from '@svc/sdk';
import type { FastifyRequest } from 'fastify';
import { AutoTopupService } from '../../services/purchases/auto-topup.service';
import type { SetupUrls } from '../../services/purchases/auto-topup.service';
import { SettingsService } from '../../services/settings/settings.service';
import type { AutoTopupChange, AutoTopupState, SettingsRow } from '../../services/settings/settings.service';
import { auditActorOf } from '../audit-actor';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { AutoTopupSetupDto, BillingSettingsDto } from './settings.dto';
import type { AutoTopupSettingsDto } from './settings.dto';

/** The answers are the SDK's types (one declaration; the SDK contract test checks them against the OpenAPI document). */
export type BillingSettingsView = BillingSettings & { request_id: string };
export type AutoTopupSetupView = AutoTopupSetup & { request_id: string };

/** Where a setup session returns the owner when the body names nowhere. */
export const SETUP_URLS = Symbol('SETUP_URLS');

/** A top-up row's status (the table's trigger allows these four only). */
type TopUpStatus = NonNullable<AutoTopupSettings['last_topup']>['status'];

const usdOrNull = (micros: Micros | null): number | null => (micros === null ? null : microsToUsd(micros));

function autoTopupView(state: AutoTopupState): AutoTopupSettings {
  return {
    enabled: state.enabled,
    threshold_usd: usdOrNull(state.thresholdMicros),
    amount_usd: usdOrNull(state.amountMicros),
    monthly_cap_usd: usdOrNull(state.monthlyCapMicros),
    payment_method: state.paymentMethod === null ? null : { brand: state.paymentMethod.brand, last4: state.paymentMethod.last4, saved_at: state.paymentMethod.savedAt.toISOString() },
    month_to_date_usd: microsToUsd(state.monthMicros),
    consecutive_failures: state.consecutiveFailures,
    disabled_reason: state.disabledReason === 'payment_failed' ? 'payment_failed' : null,
    last_topup: state.last === null ? null : {
      id: state.last.id, status: state.last.status as TopUpStatus, amount_usd: microsToUsd(state.last.amountMicros), failure_code: state.last.failureCode, created_at: state.last.createdAt.toISOString(),
    },
  };
}

const view = (row: SettingsRow, state: AutoTopupState, requestId: string): BillingSettingsView => ({
  low_balance_threshold_usd: row.lowBalanceThresholdMicros === null ? null : microsToUsd(row.lowBalanceThresholdMicros),
  auto_topup: autoTopupView(state),
  request_id: requestId,
});

/** The change in micro-USD (the service checks the merged result under the settings row's lock). */
function autoTopupChange(body: AutoTopupSettingsDto): AutoTopupChange {
  return {
    enabled: body.enabled,
    thresholdMicros: body.threshold_usd === undefined ? undefined : usdToMicros(body.threshold_usd),
    amountMicros: body.amount_usd === undefined ? undefined : usdToMicros(body.amount_usd),
    monthlyCapMicros: body.monthly_cap_usd === undefined ? undefined : usdToMicros(body.monthly_cap_usd),
  };
}

/**
 * GET and PATCH /v1/billing/settings, POST /v1/billing/auto-topup/setup (management access;
 * the dashboard through account-admin). Changes and card setups are in the audit log.
 */
@InternalAuthController('v1/billing', { key: 'management' })
export class BillingSettingsController {
  constructor(
    @Inject(SettingsService) private readonly settings: SettingsService,
    @Inject(AutoTopupService) private readonly autoTopups: AutoTopupService,
    @Inject(SETUP_URLS) private readonly setupUrls: SetupUrls,
  ) {}

  @Get('settings')
  async get(@Caller() caller: CallerIdentity, @Req() request: FastifyRequest): Promise<BillingSettingsView> {
    const current = await this.settings.get(caller.accountId);
    return view(current.settings, current.autoTopup, request.id);
  }

  @Patch('settings')
  async update(@Caller() caller: CallerIdentity, @Body() body: BillingSettingsDto, @Req() request: FastifyRequest): Promise<BillingSettingsView> {
    const low = body.low_balance_threshold_usd;
    await this.settings.update(caller.accountId, {
      ...(body.auto_topup === undefined ? {} : { autoTopup: autoTopupChange(body.auto_topup) }),
      ...(low === undefined ? {} : { lowBalanceThresholdMicros: low === null ? null : usdToMicros(low) }),
    }, auditActorOf(caller, request));
    if (body.auto_topup !== undefined) request.log.info({ account_id: caller.accountId, auto_topup_enabled: body.auto_topup.enabled ?? null }, 'automatic top-up settings saved');
    const current = await this.settings.get(caller.accountId);
    return view(current.settings, current.autoTopup, request.id);
  }

  @Post('auto-topup/setup')
  @HttpCode(201)
  async setup(@Caller() caller: CallerIdentity, @Body() body: AutoTopupSetupDto, @Req() request: FastifyRequest): Promise<AutoTopupSetupView> {
    const created = await this.autoTopups.createSetupSession(caller.accountId, {
      successUrl: body.success_url ?? this.setupUrls.successUrl, cancelUrl: body.cancel_url ?? this.setupUrls.cancelUrl,
    }, auditActorOf(caller, request));
    return { object: 'auto_topup_setup', url: created.url, expires_at: created.expiresAt.toISOString(), request_id: request.id };
  }
}
