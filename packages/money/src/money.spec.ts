import { isUsdAmount, microsToUsd, usdToMicros } from './money';

describe('money', () => {
  it('converts USD to micro-USD exactly for six decimals', () => {
    expect(usdToMicros(0.005)).toBe(5000);
    expect(usdToMicros(0.1)).toBe(100_000);
    expect(usdToMicros(0.00125)).toBe(1250);
    expect(usdToMicros(10_000)).toBe(10_000_000_000);
    expect(usdToMicros(1.000001)).toBe(1_000_001);
  });

  it('writes micro-USD as the decimal USD number', () => {
    expect(microsToUsd(5000)).toBe(0.005);
    expect(microsToUsd(7_500_000)).toBe(7.5);
    expect(microsToUsd(1)).toBe(0.000001);
  });

  it('round-trips every micro amount in a sample', () => {
    for (let m = 0; m < 2_000_000; m += 7919) expect(usdToMicros(microsToUsd(m))).toBe(m);
  });

  it.each([0.0000001, 1e-7, NaN, Infinity, '5', null, 2e9])('rejects %p', (value) => {
    expect(isUsdAmount(value)).toBe(false);
  });

  it('refuses non-integer micros', () => {
    expect(() => microsToUsd(0.5)).toThrow(RangeError);
  });
});
