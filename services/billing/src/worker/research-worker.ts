import type { ResearchModelSpec, ResearchProvider } from '@svc/contracts';
import { DrainState } from '@svc/http-edge';
import { startMetricsServer } from '@svc/metrics';
import { closeRedisClient } from '@svc/redis-client';
import type { Logger } from 'pino';
import { ExaAgentAdapter } from '../adapters/research/exa-agent.adapter';
import type { ResearchProviderApi } from '../adapters/research/research-provider';
import { TavilyResearchAdapter } from '../adapters/research/tavily-research.adapter';
import { DatabaseProbeRepository } from '../db/prisma.repository';
import { Transactions } from '../db/transactions';
import type { ResearchWorkerConfig } from '../research-worker-config';
import { ResearchWorkerMetrics } from '../services/metrics/metrics';
import { ResearchQueueAdapter } from '../services/research/research-queue.adapter';
import { ResearchRunner } from '../services/research/research-runner';
import { ResearchSpendableAdapter } from '../services/spendable/research-spendable.adapter';
import { SpendableBalanceAdapter } from '../services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../services/spendable/spendable-outbox.service';
import { EventsRepository } from '../stores/events.repository';
import { LedgerAppendRepository } from '../stores/ledger-append.repository';
import { LedgerRepository } from '../stores/ledger.repository';
import { ResearchRepository } from '../stores/research.repository';
import { startQueues } from './queue-processor';
import { researchProcessor } from './research.processor';
import { queueConnection } from './watched-worker';
import { startWorkerHealth } from './worker-health';
import { Opened, openWorkerStores } from './worker-base';

export interface RunningResearchWorker {
  url: string;
  metricsUrl: string | null;
  /** Stops taking new steps' work at the next sweep and turns /readyz 503 `draining` (SIGTERM). */
  drain: DrainState;
  /** Closes the workers (each finishes its current step: a run's state is in its row), then everything else. */
  close(): Promise<void>;
}

/** A provider without a platform key refuses every start: the run falls back to its next model. */
function unconfigured(provider: ResearchProvider): ResearchProviderApi {
  const refused = { kind: 'refused' as const, error: `this deployment has no ${provider} key` };
  return {
    provider,
    start: async () => refused,
    poll: async (_id: string, _model: ResearchModelSpec) => refused,
    cancel: async () => null,
  };
}

/**
 * The research worker (dist/research-worker.js; docs/decisions/0062): one BullMQ processor per
 * research provider (each limited to the provider's documented request rate), the sweep that
 * re-queues every open run whose job is gone (after a Redis that lost its data, a job given up,
 * a process that died between a commit and its queue write), and the health and metrics
 * listeners. It shares billing's database and its ledger-append port, and runs beside the
 * ledger worker, which delivers the runs' webhook events and rebuilds cold accounts.
 */
export async function startResearchWorker(config: ResearchWorkerConfig, logger: Logger): Promise<RunningResearchWorker> {
  const opened = new Opened(logger);
  const close = opened.close;
  try {
    const { db, data, target } = openWorkerStores(config, logger, opened);
    const producer = queueConnection(target, logger);
    opened.push('queue connection', () => closeRedisClient(producer));
    const queue = new ResearchQueueAdapter(producer);
    opened.push('research queues', () => queue.close());

    const runs = new ResearchRepository(db.prisma);
    const money = new ResearchSpendableAdapter(data);
    const outbox = new SpendableOutboxService(new LedgerRepository(db.prisma), new SpendableBalanceAdapter(data), logger.child({ component: 'outbox' }), { adapter: money, runs });
    const http = (baseUrl: string, apiKey: string) => ({ baseUrl: baseUrl.replace(/\/+$/, ''), apiKey, timeoutMs: config.RESEARCH_CALL_TIMEOUT_MS });
    const providers: Record<ResearchProvider, ResearchProviderApi> = {
      exa: config.EXA_API_KEY === undefined ? unconfigured('exa') : new ExaAgentAdapter(http(config.EXA_BASE_URL, config.EXA_API_KEY)),
      tavily: config.TAVILY_API_KEY === undefined ? unconfigured('tavily') : new TavilyResearchAdapter(http(config.TAVILY_BASE_URL, config.TAVILY_API_KEY)),
    };
    const metrics = new ResearchWorkerMetrics(() => runs.countOpen());
    const runner = new ResearchRunner(
      { transactions: new Transactions(db.prisma), runs, append: new LedgerAppendRepository(db.pool), events: new EventsRepository(db.prisma) },
      providers, money, outbox, logger.child({ component: 'research' }),
      {
        runTimeoutMs: config.RESEARCH_RUN_TIMEOUT_MS, pollMinMs: config.RESEARCH_POLL_MIN_MS, pollMaxMs: config.RESEARCH_POLL_MAX_MS,
        startTriesMax: config.RESEARCH_START_TRIES, holdTtlMs: config.RESEARCH_RUN_TIMEOUT_MS + 3_600_000,
      },
      () => new Date(),
      metrics,
    );
    const lock = { durationMs: config.RESEARCH_JOB_LOCK_MS, stalledIntervalMs: Math.max(500, Math.floor(config.RESEARCH_JOB_LOCK_MS / 2)) };
    const common = { runner, queue, concurrency: config.RESEARCH_CONCURRENCY, lock, watchEveryMs: config.RESEARCH_SWEEP_INTERVAL_MS, logger, onStep: (p: ResearchProvider, o: 'later' | 'done' | 'error') => metrics.step(p, o) };
    const queues = await startQueues([
      researchProcessor({ ...common, provider: 'exa', limiter: { max: config.RESEARCH_EXA_REQUESTS_PER_SECOND, duration: 1_000 } }),
      researchProcessor({ ...common, provider: 'tavily', limiter: { max: config.RESEARCH_TAVILY_REQUESTS_PER_MINUTE, duration: 60_000 } }),
    ], target, logger);
    opened.push('queues', () => queues.close());

    // The sweep: every open run's job is added again (its id is the run's: a job that exists is
    // left alone), and the queues' watch schedules are written again (after a Redis that lost
    // its data nothing else would bring them back).
    const drain = new DrainState();
    let sweeping = false;
    const sweep = async (): Promise<void> => {
      if (sweeping || drain.draining) return;
      sweeping = true;
      try {
        await queues.schedule();
        for (const run of await runs.open(10_000)) {
          if (run.provider !== null) await queue.enqueue(run.id, run.provider);
        }
      } catch (error) {
        logger.warn({ err: error }, 'research sweep failed; it runs again at the next interval');
      } finally {
        sweeping = false;
      }
    };
    const timer = setInterval(() => void sweep(), config.RESEARCH_SWEEP_INTERVAL_MS);
    opened.push('sweep', () => clearInterval(timer));
    await sweep();

    const database = new DatabaseProbeRepository(db.prisma);
    const health = await startWorkerHealth({
      readiness: {
        async check() {
          const [postgres, redis] = await Promise.all([database.ping(), data.ping().then((reply) => reply === 'PONG', () => false)]);
          return { postgres, redis };
        },
      },
      status: { snapshot: async () => ({ open_runs: await runs.countOpen() }) },
      logger: logger.child({ listener: 'health' }), http: metrics.http, port: config.PORT, host: config.HOST, requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS, drain,
    });
    opened.push('health listener', () => health.close());
    const metricsServer = await startMetricsServer({ registry: metrics.registry, port: config.METRICS_PORT, host: config.HOST, log: logger });
    opened.push('metrics listener', () => metricsServer?.close());
    return { url: health.url, metricsUrl: metricsServer?.url ?? null, drain, close };
  } catch (error) {
    await close();
    throw error;
  }
}
