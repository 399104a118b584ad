import 'reflect-metadata';
import { ConfigError } from '@svc/config';
import { createApp } from './app';
import { parseConfig } from './config';
import type { AppConfig } from './config';
import { migrate } from './db/migrate';
import { createLogger } from './logging/logger';
import { AccountAdminMetrics } from './metrics/metrics';
import { startMetricsServer } from '@svc/metrics';
import { startTracing } from '@svc/tracing';

function loadConfig(): AppConfig {
  try {
    return parseConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`account-admin: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  if (config.MIGRATE_ON_START) {
    const result = await migrate(config.DATABASE_URL);
    logger.info({ applied: result.applied }, 'migrations applied');
  }
  const tracing = startTracing('account-admin');
  const metrics = new AccountAdminMetrics();
  const app = await createApp(config, logger, metrics);
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  if (tracing !== null) process.once('beforeExit', () => void tracing.shutdown());
  await app.listen(config.PORT, config.HOST);
  const server = await startMetricsServer({ registry: metrics.registry, port: config.METRICS_PORT, host: config.HOST, log: logger });
  logger.info({ port: config.PORT, grpc_port: config.GRPC_PORT, metrics_url: server?.url ?? null }, 'account-admin listening');
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
