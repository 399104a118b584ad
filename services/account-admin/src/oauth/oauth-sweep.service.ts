import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { OAUTH_LIFETIMES } from '@svc/contracts';
import { describeError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import { PeriodicLoop } from '../periodic/periodic-loop';
import type { Logger } from '../logging/logger';
import { OAuthSweepRepository } from './oauth-sweep.repository';
import type { SweepCounts } from './oauth-sweep.repository';

/** Rows deleted per statement. */
export const SWEEP_BATCH = 1_000;

/**
 * The sweep of expired OAuth rows (docs/decisions/0046): on start and then every
 * OAUTH_SWEEP_INTERVAL_MS, each replica deletes expired authorization requests, expired codes
 * and tokens and every token of a revoked grant, then the metadata-document clients nothing
 * names any more. Grants stay (the Connected apps page lists ended ones, and the audit log
 * names them); so do dynamically registered clients. Replicas sweep side by side safely: a
 * row is deleted once, whoever gets it.
 */
@Injectable()
export class OAuthSweepService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly loop: PeriodicLoop;

  constructor(
    @Inject(OAuthSweepRepository) private readonly sweeps: OAuthSweepRepository,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.loop = new PeriodicLoop(
      async () => {
        const counts = await this.sweep();
        if (counts.requests + counts.tokens + counts.clients > 0) this.logger.info({ deleted: counts }, 'oauth sweep: expired rows deleted');
      },
      config.OAUTH_SWEEP_INTERVAL_MS,
      (error) => this.logger.error({ err: describeError(error) }, 'oauth sweep failed; will retry'),
    );
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  /** One pass; resolves with what it deleted. A client is kept for a request's lifetime after its fetch, so an authorization in flight keeps it. */
  async sweep(now: Date = new Date()): Promise<SweepCounts> {
    const requests = await this.untilDone((batch) => this.sweeps.deleteExpiredRequests(now, batch));
    const tokens = await this.untilDone((batch) => this.sweeps.deleteEndedTokens(now, batch));
    const fetchedBefore = new Date(now.getTime() - OAUTH_LIFETIMES.requestSeconds * 1000);
    const clients = await this.untilDone((batch) => this.sweeps.deleteUnusedDocumentClients(fetchedBefore, batch));
    return { requests, tokens, clients };
  }

  private async untilDone(deleteBatch: (batch: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteBatch(SWEEP_BATCH);
      total += deleted;
      if (deleted < SWEEP_BATCH || this.loop.stopped) return total;
    }
  }

  /** Stops the loop and waits for a pass in progress. */
  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
