import 'reflect-metadata';
import { ConfigError } from '@svc/config';
import { stopOnSignals } from '@svc/http-edge';
import { startTracing } from '@svc/tracing';
import { createLogger } from './logger';
import { parseResearchWorkerConfig } from './research-worker-config';
import type { ResearchWorkerConfig } from './research-worker-config';
import { startResearchWorker } from './worker/research-worker';

function loadConfigOrExit(): ResearchWorkerConfig {
  try {
    return parseResearchWorkerConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`research-worker: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * The research worker (dist/research-worker.js): advances research runs at their providers and
 * settles them. On SIGTERM it drains: /readyz turns 503 at once, and after SHUTDOWN_DELAY_MS its
 * workers close, each finishing the step it is in (a run's next step is in Redis and its state
 * in PostgreSQL, so another replica, or this one restarted, goes on from there).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL, 'research-worker');
  const tracing = startTracing('research-worker');
  const running = await startResearchWorker(config, logger);
  logger.info({
    listen_url: running.url, metrics_url: running.metricsUrl, exa: config.EXA_API_KEY !== undefined, tavily: config.TAVILY_API_KEY !== undefined,
    run_timeout_ms: config.RESEARCH_RUN_TIMEOUT_MS,
  }, 'research worker running');
  stopOnSignals({
    name: 'research worker',
    log: logger,
    drain: { state: running.drain, delayMs: config.SHUTDOWN_DELAY_MS },
    close: async () => {
      await running.close();
      await tracing?.shutdown();
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`research-worker: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
