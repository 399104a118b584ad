import { LIMITS } from '@svc/contracts';
import { UrlField, UsdField } from '@svc/http-edge';
import { isUsdAmount, microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import { ValidateBy } from 'class-validator';
import type { CheckoutBody } from '../../services/purchases/checkout.service';
import { MICROS_PER_CENT } from '../../common/cents';

export const MIN_PURCHASE_USD = LIMITS.purchaseUsd.min;
export const MAX_PURCHASE_USD = LIMITS.purchaseUsd.max;
const URL_MESSAGE = (field: string): string => `${field} must be an http(s) URL of at most ${LIMITS.url.max} characters`;

export type { CheckoutBody };

/** POST /v1/credits/checkout: `{"amount_usd": 5..10000 (whole cents), "success_url"?, "cancel_url"?}`. */
export class CheckoutBodyDto {
  @UsdField(
    { min: MIN_PURCHASE_USD, max: MAX_PURCHASE_USD },
    {
      description: 'USD to buy, in whole cents (at most 2 decimals).',
      missingMessage: 'amount_usd is required',
      message: (args) => (typeof args.value === 'number' && Number.isFinite(args.value) ? `amount_usd must be from ${MIN_PURCHASE_USD} to ${MAX_PURCHASE_USD}` : 'amount_usd must be a number'),
    },
    [IsWholeCents()],
  )
  amount_usd!: number;

  @UrlField(LIMITS.url.max, { presence: 'nullable', message: URL_MESSAGE('success_url'), description: "http(s) URL; default: the deployment's CHECKOUT_SUCCESS_URL." })
  success_url?: string | null;

  @UrlField(LIMITS.url.max, { presence: 'nullable', message: URL_MESSAGE('cancel_url'), description: "http(s) URL; default: the deployment's CHECKOUT_CANCEL_URL." })
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
