import 'reflect-metadata';
import { ConfigError } from '@svc/config';
import { startBilling } from './app/app';
import { createLogger } from './logger';
import { parseBillingConfig } from './config';
import type { BillingConfig } from './config';
import { migrateBillingDatabase } from './db/migrate';
import { stopOnSignals } from '@svc/http-edge';
import { startMetricsServer } from '@svc/metrics';
import { startTracing } from '@svc/tracing';

function loadConfigOrExit(): BillingConfig {
  try {
    return parseBillingConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`billing: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  if (config.MIGRATE_ON_START) {
    const result = await migrateBillingDatabase(config.DATABASE_URL);
    logger.info({ applied: result.applied }, 'migrations applied');
  }
  const tracing = startTracing('billing');
  const running = await startBilling(config, logger);
  const metrics = await startMetricsServer({ registry: running.metrics.registry, port: config.METRICS_PORT, host: config.HOST, log: logger });
  logger.info({ public_url: running.publicUrl, operator_url: running.operatorUrl, metrics_url: metrics?.url ?? null }, 'billing listening');
  // SIGTERM/SIGINT (docs/operations.md "Rollouts"): both listeners unready at once (/readyz
  // 503) and every reply says `connection: close`; after SHUTDOWN_DELAY_MS they stop accepting
  // and the requests in flight finish, then the stores close; exit 0.
  stopOnSignals({
    name: 'billing',
    log: logger,
    drain: { state: running.drain, delayMs: config.SHUTDOWN_DELAY_MS },
    close: async () => {
      await running.close();
      await metrics?.close();
      await tracing?.shutdown();
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`billing: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
