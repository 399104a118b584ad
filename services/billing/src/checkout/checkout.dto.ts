import { IsUsdAmount } from '@svc/http-edge';
import { isUsdAmount, microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import { IsDefined, IsUrl, MaxLength, ValidateBy, ValidateIf } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export const MIN_PURCHASE_USD = 5;
export const MAX_PURCHASE_USD = 10_000;
export const MICROS_PER_CENT = 10_000;
const MAX_URL_LENGTH = 2_048;

export interface CheckoutBody {
  creditMicros: Micros;
  amountCents: number;
  successUrl: string | null;
  cancelUrl: string | null;
}

const IfPresent = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null);

/** POST /v1/credits/checkout: `{"amount_usd": 5..10000 (whole cents), "success_url"?, "cancel_url"?}`. */
export class CheckoutBodyDto {
  @ApiProperty({ type: 'number', minimum: MIN_PURCHASE_USD, maximum: MAX_PURCHASE_USD, description: 'USD to buy, in whole cents (at most 2 decimals).' })
  @IsDefined({ message: 'amount_usd is required' })
  @IsUsdAmount(
    { min: MIN_PURCHASE_USD, max: MAX_PURCHASE_USD },
    { message: (args) => (typeof args.value === 'number' && Number.isFinite(args.value) ? `amount_usd must be from ${MIN_PURCHASE_USD} to ${MAX_PURCHASE_USD}` : 'amount_usd must be a number') },
  )
  @IsWholeCents()
  amount_usd!: number;

  @ApiPropertyOptional({ type: 'string', format: 'uri', maxLength: MAX_URL_LENGTH, nullable: true, description: 'http(s) URL; default: the deployment\'s CHECKOUT_SUCCESS_URL.' })
  @IfPresent()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: `success_url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters` })
  @MaxLength(MAX_URL_LENGTH, { message: `success_url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters` })
  success_url?: string | null;

  @ApiPropertyOptional({ type: 'string', format: 'uri', maxLength: MAX_URL_LENGTH, nullable: true, description: 'http(s) URL; default: the deployment\'s CHECKOUT_CANCEL_URL.' })
  @IfPresent()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: `cancel_url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters` })
  @MaxLength(MAX_URL_LENGTH, { message: `cancel_url must be an http(s) URL of at most ${MAX_URL_LENGTH} characters` })
  cancel_url?: string | null;
}

/** Whole cents: what the payment processor charges. */
function IsWholeCents(): PropertyDecorator {
  return ValidateBy({
    name: 'isWholeCents',
    validator: {
      // Only a number in range reaches this check's verdict; IsUsdAmount names other problems.
      validate: (value: unknown) =>
        typeof value !== 'number' || !(value >= MIN_PURCHASE_USD && value <= MAX_PURCHASE_USD) || !isUsdAmount(value) || usdToMicros(value) % MICROS_PER_CENT === 0,
      defaultMessage: () => 'amount_usd must be a whole number of cents (at most 2 decimals)',
    },
  });
}

export function toCheckoutBody(body: CheckoutBodyDto): CheckoutBody {
  const creditMicros = usdToMicros(body.amount_usd);
  return {
    creditMicros,
    amountCents: creditMicros / MICROS_PER_CENT,
    successUrl: body.success_url ?? null,
    cancelUrl: body.cancel_url ?? null,
  };
}

export interface CheckoutView {
  id: string;
  url: string;
  amount_usd: number;
  expires_at: string;
  request_id: string;
}

export function checkoutView(created: { id: string; url: string; creditMicros: Micros; expiresAt: Date }, requestId: string): CheckoutView {
  return { id: created.id, url: created.url, amount_usd: microsToUsd(created.creditMicros), expires_at: created.expiresAt.toISOString(), request_id: requestId };
}
