import { parseCheckoutBody } from './checkout.dto';

describe('parseCheckoutBody', () => {
  it('turns an amount in USD into cents and micro-USD exactly', () => {
    expect(parseCheckoutBody({ amount_usd: 19.99 })).toEqual({ creditMicros: 19_990_000, amountCents: 1_999, successUrl: null, cancelUrl: null });
  });

  it.each([[4.999], [10_000.001], [Number.NaN], [-5], [5.005], [null], [true]])('rejects amount_usd %p', (amount) => {
    expect(() => parseCheckoutBody({ amount_usd: amount })).toThrow(/amount_usd/);
  });

  it('accepts http(s) redirect URLs only', () => {
    expect(parseCheckoutBody({ amount_usd: 5, cancel_url: 'http://localhost/x' }).cancelUrl).toBe('http://localhost/x');
    expect(() => parseCheckoutBody({ amount_usd: 5, cancel_url: 'ftp://x' })).toThrow('cancel_url');
    expect(() => parseCheckoutBody({ amount_usd: 5, success_url: 'not a url' })).toThrow('success_url');
  });
});
