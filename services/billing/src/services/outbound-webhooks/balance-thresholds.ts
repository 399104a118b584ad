import { microsToUsd } from '@svc/money';
import type { ThresholdStores } from './key-limit-thresholds';

/**
 * balance.low, once per downward crossing (docs/decisions/0028). Evaluated by the ledger
 * worker's thresholds processor on the durable balance (PostgreSQL), never on the search path.
 * Each account with a threshold is armed while its balance is at or above it; the first
 * evaluation that finds it below disarms it and writes the event in the same transaction (the
 * UPDATE's condition makes that once, however many workers evaluate at the same time); a
 * balance back at or above the threshold arms it again.
 */
export class BalanceThresholds {
  constructor(private readonly stores: ThresholdStores) {}

  /** Returns how many balance.low events it wrote. */
  async evaluate(): Promise<number> {
    const { transactions, thresholds, events } = this.stores;
    await thresholds.rearmLowBalance();
    let written = 0;
    for (const accountId of await thresholds.crossedLowBalance()) {
      written += await transactions.run(async (tx) => {
        const fired = await thresholds.fireLowBalance(tx, accountId);
        if (fired === null) return 0;
        await events.emit(tx, {
          accountId,
          type: 'balance.low',
          data: { balance_usd: microsToUsd(fired.balanceMicros), threshold_usd: microsToUsd(fired.thresholdMicros) },
        });
        return 1;
      });
    }
    return written;
  }
}
