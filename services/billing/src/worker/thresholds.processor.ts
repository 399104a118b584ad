import { THRESHOLDS_QUEUE } from '@svc/contracts';
import type { Logger } from 'pino';
import type { BalanceThresholds } from '../services/outbound-webhooks/balance-thresholds';
import type { KeyLimitThresholds } from '../services/outbound-webhooks/key-limit-thresholds';
import type { QueueProcessor } from './queue-processor';

const CHECK_JOB = 'check';

export interface ThresholdsParts {
  balance: BalanceThresholds;
  keyLimits: KeyLimitThresholds;
  everyMs: number;
  logger: Logger;
}

/**
 * THRESHOLDS_QUEUE: every WEBHOOK_DISPATCH_INTERVAL_MS, balance.low (each account's durable
 * balance against its threshold) and key.limit.threshold (the keys that settled since their
 * last check, against their limits from account-admin). Each part on its own: account-admin
 * being down (key limits) must not stop balance.low; a failed part runs again at the next interval.
 */
export function thresholdsProcessor(parts: ThresholdsParts): QueueProcessor<unknown, typeof CHECK_JOB> {
  const part = async (name: string, run: () => Promise<number>): Promise<number | null> => run().catch((error: unknown) => {
    parts.logger.warn({ err: error instanceof Error ? error.message : String(error), part: name }, 'threshold check failed; it runs again at the next interval');
    return null;
  });
  return {
    queue: THRESHOLDS_QUEUE,
    label: 'thresholds',
    schedules: [{ name: CHECK_JOB, everyMs: parts.everyMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    failedMessage: 'threshold check failed; it runs again at the next interval',
    async process() {
      const low = await part('balance.low', () => parts.balance.evaluate());
      const limits = await part('key.limit.threshold', () => parts.keyLimits.evaluate());
      return { low, limits };
    },
  };
}
