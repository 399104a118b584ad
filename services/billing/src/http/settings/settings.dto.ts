import { createRequire } from 'node:module';
import { LIMITS } from '@svc/contracts';
import { BooleanField, UrlField, UsdField } from '@svc/http-edge';
import { isUsdAmount, usdToMicros } from '@svc/money';
import { Type } from 'class-transformer';
import { IsObject, ValidateBy, ValidateIf, ValidateNested } from 'class-validator';
import type { ValidationArguments } from 'class-validator';

const { min, max } = LIMITS.lowBalanceThresholdUsd;
const MICROS_PER_CENT = 10_000;

/** A USD amount in whole cents (Stripe charges cents), checked once the range check passed. */
function WholeCents(field: string, range: { min: number; max: number }): PropertyDecorator {
  return ValidateBy({
    name: 'isWholeCents',
    validator: {
      validate: (value: unknown) => typeof value !== 'number' || !(value >= range.min && value <= range.max) || !isUsdAmount(value) || usdToMicros(value) % MICROS_PER_CENT === 0,
      defaultMessage: () => `${field} must be a whole number of cents (at most 2 decimals)`,
    },
  });
}

const rangeMessage = (field: string, range: { min: number; max: number }) => (args: ValidationArguments): string =>
  typeof args.value === 'number' && Number.isFinite(args.value) ? `${field} must be from ${range.min} to ${range.max}` : `${field} must be a number`;

const AMOUNT = LIMITS.autoTopupAmountUsd;
const THRESHOLD = LIMITS.autoTopupThresholdUsd;
const CAP = LIMITS.autoTopupMonthlyCapUsd;

/** PATCH /v1/billing/settings `auto_topup`: the fields to change (each optional; checked together after the merge). */
export class AutoTopupSettingsDto {
  @BooleanField({ presence: 'optional', description: 'Turns automatic top-up on (needs a saved card, threshold_usd, amount_usd and monthly_cap_usd) or off.' })
  enabled?: boolean;

  @UsdField(THRESHOLD, { presence: 'optional', description: 'A top-up is made when the balance falls below this (once per crossing). Whole cents.', message: rangeMessage('threshold_usd', THRESHOLD) }, [WholeCents('threshold_usd', THRESHOLD)])
  threshold_usd?: number;

  @UsdField(AMOUNT, { presence: 'optional', description: 'What one top-up charges the saved card and credits. Whole cents.', message: rangeMessage('amount_usd', AMOUNT) }, [WholeCents('amount_usd', AMOUNT)])
  amount_usd?: number;

  @UsdField(CAP, { presence: 'optional', description: 'The most automatic top-ups may charge in one calendar month (UTC); at least amount_usd. Whole cents.', message: rangeMessage('monthly_cap_usd', CAP) }, [WholeCents('monthly_cap_usd', CAP)])
  monthly_cap_usd?: number;
}

type Swagger = typeof import('@nestjs/swagger');

/** The nested object's OpenAPI property (loaded lazily, as @svc/http-edge's fields do). */
function nestedProperty(): PropertyDecorator {
  const swagger = createRequire(__filename)('@nestjs/swagger') as Swagger;
  return swagger.ApiProperty({ type: () => AutoTopupSettingsDto, required: false, description: 'Automatic top-up: any of its fields. Saving it clears a failure notice and arms it again.' });
}

/** PATCH /v1/billing/settings: the fields to change. */
export class BillingSettingsDto {
  @UsdField(
    { min, max },
    {
      presence: 'nullable',
      description: 'balance.low is sent when the balance falls below this (once per crossing); null turns it off. Whole cents.',
      message: (args) => (typeof args.value === 'number' && Number.isFinite(args.value) ? `low_balance_threshold_usd must be from ${min} to ${max}` : 'low_balance_threshold_usd must be a number or null'),
    },
    [WholeCents('low_balance_threshold_usd', { min, max })],
  )
  low_balance_threshold_usd?: number | null;

  @nestedProperty()
  @ValidateIf((_object: object, value: unknown) => value !== undefined)
  @IsObject({ message: 'auto_topup must be an object' })
  @ValidateNested()
  @Type(() => AutoTopupSettingsDto)
  auto_topup?: AutoTopupSettingsDto;
}

/** POST /v1/billing/auto-topup/setup: where Stripe sends the owner back (both optional). */
export class AutoTopupSetupDto {
  @UrlField(LIMITS.url.max, { presence: 'nullable', message: `success_url must be an http(s) URL of at most ${LIMITS.url.max} characters`, description: "http(s) URL; default: the deployment's CHECKOUT_SUCCESS_URL." })
  success_url?: string | null;

  @UrlField(LIMITS.url.max, { presence: 'nullable', message: `cancel_url must be an http(s) URL of at most ${LIMITS.url.max} characters`, description: "http(s) URL; default: the deployment's CHECKOUT_CANCEL_URL." })
  cancel_url?: string | null;
}
