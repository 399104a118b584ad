import { ShardEpochs } from '@svc/contracts';
import type { Logger } from 'pino';
import type { HydrationRedisAdapter } from './hydration-redis.adapter';
import type { HydrationService } from './hydration.service';

export interface HydrationLoopOptions {
  intervalMs: number;
  /** Accounts taken from the wanted set per round. */
  batch: number;
  /** Called when the epoch changed (Redis lost its data): e.g. re-create BullMQ job schedulers. */
  onEpochChange?: () => Promise<void>;
}

/**
 * The ledger worker's recovery loop: every `intervalMs` it reads the epoch of every shard
 * (creating the missing ones, so the grace period starts even when no gateway is up), calls
 * `onEpochChange` when one changed (that shard lost its data), and hydrates the accounts in the wanted set (gateways and the outbox add
 * cold accounts there). An account stays in the set until it is hydrated.
 */
export class HydrationLoop {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The epoch of every shard seen so far. */
  private readonly epochs = new ShardEpochs();

  constructor(
    private readonly service: HydrationService,
    private readonly redis: HydrationRedisAdapter,
    private readonly logger: Logger,
    private readonly options: HydrationLoopOptions,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.round();
    } catch (error) {
      this.logger.warn({ err: error }, 'hydration round failed; it runs again');
    } finally {
      this.running = false;
    }
  }

  /** One round; returns how many accounts were hydrated. */
  async round(): Promise<number> {
    const epoch = await this.redis.ensureEpoch();
    // A hook that fails (its writes refused while the cluster is still down in part) runs again next round.
    await this.epochs.observe(epoch.values, async (lost) => {
      this.logger.warn({ lost_epochs: lost }, 'redis lost its data: rebuilding what the ledger worker keeps there');
      await this.options.onEpochChange?.();
    });
    let hydrated = 0;
    for (const accountId of await this.redis.wanted(this.options.batch)) {
      const outcome = await this.service.hydrate(accountId);
      if (outcome.kind === 'hydrated' || outcome.kind === 'already') {
        await this.redis.done(accountId);
        if (outcome.kind === 'hydrated') hydrated += 1;
      }
    }
    return hydrated;
  }
}
