import { AppError } from '@svc/errors';
import { isUsdAmount, microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import { jsonObject } from '../http/json-object';

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

function redirectUrl(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
    throw new AppError('invalid_request', `${name} must be an http(s) URL of at most ${MAX_URL_LENGTH} characters`);
  }
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new AppError('invalid_request', `${name} must be an http(s) URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AppError('invalid_request', `${name} must be an http(s) URL`);
  return value;
}

/** POST /v1/credits/checkout: `{"amount_usd": 5..10000 (cents), "success_url"?, "cancel_url"?}`. */
export function parseCheckoutBody(body: unknown): CheckoutBody {
  const fields = jsonObject(body, ['amount_usd', 'success_url', 'cancel_url']);
  const amount = fields.amount_usd;
  if (amount === undefined) throw new AppError('invalid_request', 'amount_usd is required');
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new AppError('invalid_request', 'amount_usd must be a number');
  if (amount < MIN_PURCHASE_USD || amount > MAX_PURCHASE_USD) {
    throw new AppError('invalid_request', `amount_usd must be from ${MIN_PURCHASE_USD} to ${MAX_PURCHASE_USD}`);
  }
  if (!isUsdAmount(amount) || usdToMicros(amount) % MICROS_PER_CENT !== 0) {
    throw new AppError('invalid_request', 'amount_usd must be a whole number of cents (at most 2 decimals)');
  }
  const creditMicros = usdToMicros(amount);
  return {
    creditMicros,
    amountCents: creditMicros / MICROS_PER_CENT,
    successUrl: redirectUrl(fields.success_url, 'success_url'),
    cancelUrl: redirectUrl(fields.cancel_url, 'cancel_url'),
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
