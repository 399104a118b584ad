import { startMetricsServer } from '@svc/metrics';
import type { Registry } from '@svc/metrics';
import { createGateway } from './app';
import { loadGatewayConfigOrExit } from './config';
import { GATEWAY_METRICS } from './gateway.module';
import { createLogger } from './logger';

async function main(): Promise<void> {
  const config = loadGatewayConfigOrExit();
  const log = createLogger(config.LOG_LEVEL);
  const app = await createGateway(config, log);
  // SIGTERM/SIGINT: stop accepting, let in-flight requests finish, then close Redis, gRPC and pools.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(config.PORT, config.HOST);
  const metrics = await startMetricsServer({ registry: app.get<Registry>(GATEWAY_METRICS), port: config.METRICS_PORT, host: config.HOST, log });
  log.info({ port: config.PORT, host: config.HOST, metrics_url: metrics?.url ?? null }, 'search-gateway listening');
}

main().catch((error: unknown) => {
  process.stderr.write(`search-gateway: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
