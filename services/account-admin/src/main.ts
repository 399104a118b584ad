import 'reflect-metadata';
import { ConfigError } from '@svc/config';
import { createApp } from './app';
import { parseConfig } from './config';
import type { AppConfig } from './config';
import { migrate } from './db/migrate';
import { createLogger } from './logging/logger';

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
  const app = await createApp(config, logger);
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(config.PORT, config.HOST);
  logger.info({ port: config.PORT, grpc_port: config.GRPC_PORT }, 'account-admin listening');
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
