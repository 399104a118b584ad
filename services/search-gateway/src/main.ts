import { createGateway } from './app';
import { loadGatewayConfigOrExit } from './config';
import { createLogger } from './logger';

async function main(): Promise<void> {
  const config = loadGatewayConfigOrExit();
  const log = createLogger(config.LOG_LEVEL);
  const app = await createGateway(config, log);
  // SIGTERM/SIGINT: stop accepting, let in-flight requests finish, then close Redis, gRPC and pools.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(config.PORT, config.HOST);
  log.info({ port: config.PORT, host: config.HOST }, 'search-gateway listening');
}

main().catch((error: unknown) => {
  process.stderr.write(`search-gateway: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
