import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DrainState, freshRequestIds } from '@svc/http-edge';
import type { HttpMetrics } from '@svc/metrics';
import type { Logger } from 'pino';
import { HealthController, READINESS, WORKER_STATUS } from '../http/health/health.controller';
import type { Readiness, WorkerStatus } from '../http/health/health.controller';
import { createListener } from '../http/listener';

/** The worker's only HTTP surface: /healthz and /readyz (with the backlog). */
@Module({})
class WorkerHealthModule {
  static register(readiness: Readiness, status: WorkerStatus, drain?: DrainState): DynamicModule {
    return {
      module: WorkerHealthModule,
      controllers: [HealthController],
      providers: [
        { provide: READINESS, useValue: readiness }, { provide: WORKER_STATUS, useValue: status },
        ...(drain === undefined ? [] : [{ provide: DrainState, useValue: drain }]),
      ],
    };
  }
}

export interface WorkerHealthOptions {
  readiness: Readiness;
  status: WorkerStatus;
  logger: Logger;
  http: HttpMetrics;
  port: number;
  host: string;
  requestTimeoutMs: number;
  /** A worker that drains on SIGTERM (the research worker): /readyz answers 503 `draining` from then on. */
  drain?: DrainState;
}

export interface WorkerHealth {
  url: string;
  close(): Promise<void>;
}

function urlOf(app: NestFastifyApplication): string {
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('listener has no TCP address');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
}

/** Starts the health listener behind the shared edge (every request gets a fresh id: nothing forwards to it). */
export async function startWorkerHealth(options: WorkerHealthOptions): Promise<WorkerHealth> {
  const app = await createListener({
    module: WorkerHealthModule.register(options.readiness, options.status, options.drain),
    logger: options.logger,
    requestIds: freshRequestIds,
    requestTimeoutMs: options.requestTimeoutMs,
    http: options.http,
  });
  try {
    await app.listen(options.port, options.host);
    return { url: urlOf(app), close: () => app.close() };
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
}
