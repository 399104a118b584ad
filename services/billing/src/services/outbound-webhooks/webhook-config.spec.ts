import { WEBHOOK_RETRY_BASE_DELAY_MS, WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RETRY_WINDOW_MS } from '@svc/contracts';
import { parseWebhookConfig, retryDelayMs } from './webhook-config';

describe('the webhook retry schedule', () => {
  const config = parseWebhookConfig({});

  it('defaults to the contracts: https only, 30 s doubling to an hour, for 24 hours', () => {
    expect(config).toMatchObject({
      WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: false,
      WEBHOOK_RETRY_BASE_DELAY_MS: WEBHOOK_RETRY_BASE_DELAY_MS,
      WEBHOOK_RETRY_MAX_DELAY_MS: WEBHOOK_RETRY_MAX_DELAY_MS,
      WEBHOOK_RETRY_WINDOW_MS: WEBHOOK_RETRY_WINDOW_MS,
    });
  });

  it('doubles from the base and stops growing at the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => retryDelayMs(n, config) / 1000)).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    expect(retryDelayMs(10_000, config)).toBe(WEBHOOK_RETRY_MAX_DELAY_MS);
  });

  it('tries about 30 times in the 24-hour window (then the window, not a count, ends the delivery)', () => {
    let elapsed = 0;
    let attempts = 1;
    while (elapsed + retryDelayMs(attempts, config) < WEBHOOK_RETRY_WINDOW_MS) elapsed += retryDelayMs(attempts++, config);
    expect(attempts).toBeGreaterThanOrEqual(28);
    expect(attempts).toBeLessThanOrEqual(32);
  });
});
