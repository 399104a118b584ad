import { csvLine, usd6 } from './finance.dto';

describe('usd6', () => {
  it.each([
    [0, '0.000000'], [1, '0.000001'], [-6_000, '-0.006000'], [20_000_000, '20.000000'], [-1_234_567_890, '-1234.567890'],
  ])('writes %i micro-USD as %s, exactly', (micros, text) => {
    expect(usd6(micros)).toBe(text);
  });
});

describe('csvLine', () => {
  it('quotes commas and quotes, and defuses free text a spreadsheet would run as a formula', () => {
    const line = csvLine({
      id: 'led_1', createdAt: new Date('2026-01-02T03:04:05.678Z'), createdAtText: '', accountId: 'acct_1', kind: 'grant',
      amountMicros: 5_000_000, balanceAfterMicros: 5_000_000, reason: '=HYPERLINK("x"), "promo"', idempotencyKey: null, requestId: 'req_1',
    });
    expect(line).toBe('led_1,2026-01-02T03:04:05.678Z,acct_1,grant,5.000000,5.000000,"\'=HYPERLINK(""x""), ""promo""",,req_1\r\n');
  });
});
