import { Body, Get, HttpCode, Inject, Patch, Post, Req } from '@nestjs/common';
import { AppError } from '@svc/errors';
import { microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import type { AutoTopupSettings, AutoTopupSetup, BillingSettings } from '@svc/sdk';
import type { FastifyRequest } from 'fastify';
import { AutoTopupRepository } from '../../stores/auto-topups.repository';
import type { AutoTopupChange, AutoTopupState } from '../../stores/auto-topups.repository';
import { AutoTopupService } from '../../services/purchases/auto-topup.service';
import type { SetupUrls } from '../../services/purchases/auto-topup.service';
import { requireManagement } from '../events/events.controller';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { AutoTopupSetupDto, BillingSettingsDto } from './settings.dto';
import type { AutoTopupSettingsDto } from './settings.dto';
import { SettingsRepository } from '../../stores/settings.repository';
import type { SettingsRow } from '../../stores/settings.repository';

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

/** The change in micro-USD, and the refusal of a result that could never top up. */
function autoTopupChange(body: AutoTopupSettingsDto, current: AutoTopupState): AutoTopupChange {
  const change: AutoTopupChange = {
    enabled: body.enabled,
    thresholdMicros: body.threshold_usd === undefined ? undefined : usdToMicros(body.threshold_usd),
    amountMicros: body.amount_usd === undefined ? undefined : usdToMicros(body.amount_usd),
    monthlyCapMicros: body.monthly_cap_usd === undefined ? undefined : usdToMicros(body.monthly_cap_usd),
  };
  const enabled = change.enabled ?? current.enabled;
  const amount = change.amountMicros ?? current.amountMicros;
  const cap = change.monthlyCapMicros ?? current.monthlyCapMicros;
  const threshold = change.thresholdMicros ?? current.thresholdMicros;
  if (amount !== null && cap !== null && cap < amount) throw new AppError('invalid_request', 'auto_topup.monthly_cap_usd must be at least auto_topup.amount_usd');
  if (enabled) {
    if (threshold === null || amount === null || cap === null) {
      throw new AppError('invalid_request', 'auto_topup needs threshold_usd, amount_usd and monthly_cap_usd to be enabled');
    }
    if (current.paymentMethod === null) {
      throw new AppError('invalid_request', 'auto_topup needs a saved card to be enabled: save one first (the dashboard\'s billing settings, "Save a card")');
    }
  }
  return change;
}

/**
 * GET and PATCH /v1/billing/settings, POST /v1/billing/auto-topup/setup (management access;
 * the dashboard through account-admin).
 */
@InternalAuthController('v1/billing')
export class BillingSettingsController {
  constructor(
    @Inject(SettingsRepository) private readonly settings: SettingsRepository,
    @Inject(AutoTopupRepository) private readonly autoTopups: AutoTopupRepository,
    @Inject(AutoTopupService) private readonly service: AutoTopupService,
    @Inject(SETUP_URLS) private readonly setupUrls: SetupUrls,
  ) {}

  @Get('settings')
  async get(@Caller() caller: CallerIdentity, @Req() request: FastifyRequest): Promise<BillingSettingsView> {
    requireManagement(caller, 'billing settings');
    return view(await this.settings.get(caller.accountId), await this.autoTopups.state(caller.accountId), request.id);
  }

  @Patch('settings')
  async update(@Caller() caller: CallerIdentity, @Body() body: BillingSettingsDto, @Req() request: FastifyRequest): Promise<BillingSettingsView> {
    requireManagement(caller, 'billing settings');
    if (body.auto_topup !== undefined) {
      const change = autoTopupChange(body.auto_topup, await this.autoTopups.state(caller.accountId));
      if (change.enabled === true && !this.service.enabled) throw new AppError('payment_disabled', 'automatic top-up is not available on this deployment');
      await this.autoTopups.update(caller.accountId, change);
      request.log.info({ account_id: caller.accountId, auto_topup_enabled: change.enabled ?? null }, 'automatic top-up settings saved');
    }
    if (body.low_balance_threshold_usd !== undefined) {
      const micros = body.low_balance_threshold_usd === null ? null : usdToMicros(body.low_balance_threshold_usd);
      await this.settings.setLowBalanceThreshold(caller.accountId, micros);
    }
    return view(await this.settings.get(caller.accountId), await this.autoTopups.state(caller.accountId), request.id);
  }

  @Post('auto-topup/setup')
  @HttpCode(201)
  async setup(@Caller() caller: CallerIdentity, @Body() body: AutoTopupSetupDto, @Req() request: FastifyRequest): Promise<AutoTopupSetupView> {
    requireManagement(caller, 'saving a card');
    const created = await this.service.createSetupSession(caller.accountId, {
      successUrl: body.success_url ?? this.setupUrls.successUrl, cancelUrl: body.cancel_url ?? this.setupUrls.cancelUrl,
    });
    return { object: 'auto_topup_setup', url: created.url, expires_at: created.expiresAt.toISOString(), request_id: request.id };
  }
}
