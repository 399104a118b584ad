import 'reflect-metadata';
import { ConfigError } from '@svc/config';
import { createApp } from './app';
import { parseConfig } from './config';
import type { AppConfig } from './config';
import { migrate } from './db/migrate';
import { createLogger } from './logging/logger';
import { AccountAdminMetrics } from './metrics/metrics';
import { DrainState, stopOnSignals } from '@svc/http-edge';
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
  await app.listen(config.PORT, config.HOST);
  const server = await startMetricsServer({ registry: metrics.registry, port: config.METRICS_PORT, host: config.HOST, log: logger });
  logger.info({ port: config.PORT, grpc_port: config.GRPC_PORT, metrics_url: server?.url ?? null }, 'account-admin listening');

  // SIGTERM/SIGINT (docs/operations.md "Rollouts"): unready at once (/readyz 503) and every
  // reply says `connection: close`; after SHUTDOWN_DELAY_MS the HTTP server stops accepting
  // and the requests in flight finish, then the gRPC server (calls in flight finish), then
  // the outbox loop, PostgreSQL and Redis; exit 0.
  stopOnSignals({
    name: 'account-admin',
    log: logger,
    drain: { state: app.get(DrainState), delayMs: config.SHUTDOWN_DELAY_MS },
    close: async () => {
      await app.close();
      await server?.close();
      await tracing?.shutdown();
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
