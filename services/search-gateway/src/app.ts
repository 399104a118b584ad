import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { edgeServerOptions, freshRequestIds } from '@svc/http-edge';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config';
import { GatewayModule } from './gateway.module';
import { GatewayHttp } from './http/gateway.http';

const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Builds the gateway (routes installed, connections open) without listening; main.ts
 * and the integration tests both start it this way.
 */
export async function createGateway(config: GatewayConfig, log: Logger): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    ...edgeServerOptions({ requestIds: freshRequestIds, bodyLimitBytes: BODY_LIMIT_BYTES, requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS, log }),
    // A request that still arrives on a kept-alive connection while the gateway closes is
    // served (with connection: close), not refused with 503.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(config, log), adapter, {
    logger: false,
    bodyParser: false,
    abortOnError: false,
  });
  app.get(GatewayHttp).install(app.getHttpAdapter().getInstance());
  await app.init();
  return app;
}
