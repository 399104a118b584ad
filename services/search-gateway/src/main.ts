import { setFlagsFromString } from 'node:v8';
import { DrainState, stopOnSignals } from '@svc/http-edge';
import { startMetricsServer } from '@svc/metrics';
import type { Registry } from '@svc/metrics';
import { startTracing } from '@svc/tracing';
import { createGateway } from './app';
import { loadGatewayConfigOrExit } from './config';
import { GATEWAY_METRICS } from './gateway.module';
import { createLogger } from './logger';

async function main(): Promise<void> {
  const config = loadGatewayConfigOrExit();
  // Before the first search; set at run time it takes effect (measured: docs/decisions/0033).
  if (!config.V8_PRETENURING) setFlagsFromString('--no-allocation-site-pretenuring');
  const log = createLogger(config.LOG_LEVEL);
  // OTLP export only when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise no tracing work at all.
  const tracing = startTracing('search-gateway');
  const app = await createGateway(config, log);
  await app.listen(config.PORT, config.HOST);
  const metrics = await startMetricsServer({ registry: app.get<Registry>(GATEWAY_METRICS), port: config.METRICS_PORT, host: config.HOST, log });
  log.info({ port: config.PORT, host: config.HOST, metrics_url: metrics?.url ?? null }, 'search-gateway listening');

  // SIGTERM/SIGINT, a rollout that loses nothing (docs/operations.md "Rollouts"):
  // 1. unready at once (/readyz 503) and every reply says `connection: close`, so the load
  //    balancer stops sending and clients leave their kept-alive connections;
  // 2. after SHUTDOWN_DELAY_MS, stop accepting; searches in flight finish (each is bounded by
  //    SEARCH_MAX_DURATION_MS);
  // 3. the settlements Redis has not answered yet are waited for, then connections close.
  stopOnSignals({
    name: 'search-gateway',
    log,
    drain: { state: app.get(DrainState), delayMs: config.SHUTDOWN_DELAY_MS },
    close: async () => {
      await app.close();
      await metrics?.close();
      await tracing?.shutdown();
    },
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`search-gateway: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
