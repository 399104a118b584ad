import { int, secret, url } from '@svc/config';

/**
 * How billing reaches Stripe, read by billing (Checkout, the webhook, the setup session) and
 * by the ledger worker (automatic top-up's off-session PaymentIntents). No secret key:
 * purchases and automatic top-up are off (payment_disabled).
 */
export const STRIPE_CLIENT_ENV = {
  STRIPE_SECRET_KEY: secret({ optional: true }),
  STRIPE_API_BASE: url({ default: 'https://api.stripe.com', protocols: ['http', 'https'] }),
  STRIPE_TIMEOUT_MS: int({ default: 10_000, min: 1, max: 120_000 }),
};
