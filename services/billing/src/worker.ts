import 'reflect-metadata';
import { ConfigError } from '@svc/config';
import { createLogger } from './logger';
import { startLedgerWorker } from './worker/ledger-worker';
import { parseLedgerWorkerConfig } from './worker-config';
import type { LedgerWorkerConfig } from './worker-config';
import { stopOnSignals } from '@svc/http-edge';
import { startTracing } from '@svc/tracing';

function loadConfigOrExit(): LedgerWorkerConfig {
  try {
    return parseLedgerWorkerConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`billing-worker: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** The ledger worker (dist/worker.js): drains settlement streams into Postgres. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL, 'ledger-worker');
  const tracing = startTracing('ledger-worker');
  const running = await startLedgerWorker(config, logger);
  logger.info({ listen_url: running.url, metrics_url: running.metricsUrl, drain_interval_ms: config.LEDGER_DRAIN_INTERVAL_MS, batch_size: config.LEDGER_BATCH_SIZE }, 'ledger worker running');
  // No drain: the worker serves only its probes. It stops at once and finishes its batch.
  stopOnSignals({
    name: 'ledger worker',
    log: logger,
    close: async () => {
      await running.close();
      await tracing?.shutdown();
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`billing-worker: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
