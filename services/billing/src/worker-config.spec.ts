import { ConfigError } from '@svc/config';
import { parseLedgerWorkerConfig } from './worker-config';

describe('ledger worker config', () => {
  it('has the documented defaults (drain cadence: docs/decisions/0006-drain-cadence.md)', () => {
    expect(parseLedgerWorkerConfig({})).toMatchObject({
      PORT: 3003, LEDGER_DRAIN_INTERVAL_MS: 1000, LEDGER_BATCH_SIZE: 2000, LEDGER_SWEEP_INTERVAL_MS: 30_000,
      RECONCILE_INTERVAL_MS: 60_000, RECONCILE_REPAIR: false, BACKLOG_LOG_INTERVAL_MS: 5000,
      LEDGER_SWEEP_SCAN_KEYS: 100_000, RECONCILE_SCAN_KEYS: 100_000,
    });
  });

  it('bounds the keys a sweep or a reconciliation run walks (decision 0036): at least one SCAN call of 1,000', () => {
    expect(parseLedgerWorkerConfig({ LEDGER_SWEEP_SCAN_KEYS: '5000', RECONCILE_SCAN_KEYS: '2000' })).toMatchObject({ LEDGER_SWEEP_SCAN_KEYS: 5000, RECONCILE_SCAN_KEYS: 2000 });
    expect(() => parseLedgerWorkerConfig({ LEDGER_SWEEP_SCAN_KEYS: '999' })).toThrow(ConfigError);
    expect(() => parseLedgerWorkerConfig({ RECONCILE_SCAN_KEYS: '0' })).toThrow(ConfigError);
  });

  it('takes a shorter drain interval and a smaller batch from the environment', () => {
    const config = parseLedgerWorkerConfig({ LEDGER_DRAIN_INTERVAL_MS: '250', LEDGER_BATCH_SIZE: '500' });
    expect(config.LEDGER_DRAIN_INTERVAL_MS).toBe(250);
    expect(config.LEDGER_BATCH_SIZE).toBe(500);
  });

  it('names a batch size out of range', () => {
    expect(() => parseLedgerWorkerConfig({ LEDGER_BATCH_SIZE: '0' })).toThrow(ConfigError);
    expect(() => parseLedgerWorkerConfig({ LEDGER_BATCH_SIZE: '10001' })).toThrow(/LEDGER_BATCH_SIZE/);
  });

  it('reads the recovery settings with the rest, once: a bad one stops the worker before it connects', () => {
    expect(parseLedgerWorkerConfig({})).toMatchObject({ HYDRATION_GRACE_MS: 3_000, HYDRATION_INTERVAL_MS: 250 });
    expect(parseLedgerWorkerConfig({ HYDRATION_GRACE_MS: '0', HYDRATION_INTERVAL_MS: '50' })).toMatchObject({ HYDRATION_GRACE_MS: 0, HYDRATION_INTERVAL_MS: 50 });
    expect(() => parseLedgerWorkerConfig({ HYDRATION_INTERVAL_MS: '5' })).toThrow(/HYDRATION_INTERVAL_MS/);
  });

  it('reads Stripe for automatic top-up: without a secret key no top-ups are made', () => {
    expect(parseLedgerWorkerConfig({})).toMatchObject({ STRIPE_SECRET_KEY: undefined, STRIPE_API_BASE: 'https://api.stripe.com', AUTO_TOPUP_RETRY_AFTER_MS: 60_000 });
    expect(parseLedgerWorkerConfig({ STRIPE_SECRET_KEY: 'sk_test_x', AUTO_TOPUP_RETRY_AFTER_MS: '500' })).toMatchObject({ STRIPE_SECRET_KEY: 'sk_test_x', AUTO_TOPUP_RETRY_AFTER_MS: 500 });
    expect(() => parseLedgerWorkerConfig({ AUTO_TOPUP_RETRY_AFTER_MS: '10' })).toThrow(/AUTO_TOPUP_RETRY_AFTER_MS/);
  });
});
