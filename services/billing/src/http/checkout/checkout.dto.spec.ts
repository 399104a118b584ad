import { validateDto } from '@svc/http-edge';
import { CheckoutBodyDto, toCheckoutBody } from './checkout.dto';

async function parseCheckoutBody(body: Record<string, unknown>): Promise<ReturnType<typeof toCheckoutBody>> {
  return toCheckoutBody(await validateDto(CheckoutBodyDto, body, 'body'));
}

describe('CheckoutBodyDto', () => {
  it('turns an amount in USD into cents and micro-USD exactly', async () => {
    expect(await parseCheckoutBody({ amount_usd: 19.99 })).toEqual({ creditMicros: 19_990_000, amountCents: 1_999, successUrl: null, cancelUrl: null });
  });

  it.each([[4.999], [10_000.001], [Number.NaN], [-5], [5.005], [null], [true], ['25'], [undefined], [1e308], [-1e308], [Number.MAX_VALUE]])('rejects amount_usd %p', async (amount) => {
    await expect(parseCheckoutBody({ amount_usd: amount })).rejects.toThrow(/amount_usd/);
  });

  it('accepts http(s) redirect URLs only', async () => {
    expect((await parseCheckoutBody({ amount_usd: 5, cancel_url: 'http://localhost/x' })).cancelUrl).toBe('http://localhost/x');
    await expect(parseCheckoutBody({ amount_usd: 5, cancel_url: 'ftp://x' })).rejects.toThrow('cancel_url');
    await expect(parseCheckoutBody({ amount_usd: 5, success_url: 'not a url' })).rejects.toThrow('success_url');
    await expect(parseCheckoutBody({ amount_usd: 5, success_url: 'https://example.com/\u0000' })).rejects.toThrow('U+0000');
  });

  it('rejects unknown fields by name', async () => {
    await expect(parseCheckoutBody({ amount_usd: 5, amount: 5 })).rejects.toThrow('unknown field "amount"');
  });
});
