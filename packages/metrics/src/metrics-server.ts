import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

export interface MetricsServerOptions {
  registry: Registry;
  port: number;
  host: string;
  log: Logger;
  /** Called before every scrape (e.g. to fold buffered observations into the registry). */
  beforeScrape?: () => void | Promise<void>;
}

export interface MetricsServer {
  /** e.g. http://127.0.0.1:9464 */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The metrics listener: a plain HTTP server on its own port (METRICS_PORT), answering
 * `GET /metrics` with the Prometheus text format and 404 to anything else. It is never the
 * public port, so nothing the edge routes can reach it. When the port cannot be taken the
 * service keeps serving without metrics (the error is logged, and Prometheus sees the target
 * down): metrics never stop searches. Returns null in that case.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer | null> {
  const { registry, log } = options;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    Promise.resolve(options.beforeScrape?.())
      .then(() => registry.metrics())
      .then(
        (text) => {
          response.writeHead(200, { 'content-type': registry.contentType });
          response.end(request.method === 'HEAD' ? undefined : text);
        },
        (error: unknown) => {
          log.error({ err: error instanceof Error ? error.message : String(error) }, 'metrics scrape failed');
          response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
        },
      );
  });
  server.keepAliveTimeout = 65_000;
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (error: Error & { code?: string }) => {
      log.error({ err: error.code ?? error.message, port: options.port }, 'metrics listener could not start; serving without metrics');
      resolve(false);
    });
    server.listen(options.port, options.host, () => resolve(true));
  });
  if (!listening) return null;
  const address = server.address();
  const port = address !== null && typeof address === 'object' ? address.port : options.port;
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
