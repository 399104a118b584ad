import { LIMITS } from '@svc/contracts';
import { UsdField } from '@svc/http-edge';
import { isUsdAmount, usdToMicros } from '@svc/money';
import { ValidateBy } from 'class-validator';

const { min, max } = LIMITS.lowBalanceThresholdUsd;

/** PATCH /v1/billing/settings: the fields to change. */
export class BillingSettingsDto {
  @UsdField(
    { min, max },
    {
      presence: 'nullable',
      description: 'balance.low is sent when the balance falls below this (once per crossing); null turns it off. Whole cents.',
      message: (args) => (typeof args.value === 'number' && Number.isFinite(args.value) ? `low_balance_threshold_usd must be from ${min} to ${max}` : 'low_balance_threshold_usd must be a number or null'),
    },
    [ValidateBy({
      name: 'isWholeCentsThreshold',
      validator: {
        validate: (value: unknown) => typeof value !== 'number' || !(value >= min && value <= max) || !isUsdAmount(value) || usdToMicros(value) % 10_000 === 0,
        defaultMessage: () => 'low_balance_threshold_usd must be a whole number of cents (at most 2 decimals)',
      },
    })],
  )
  low_balance_threshold_usd?: number | null;
}
