import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { HeaderMap, OutgoingHeaders } from './forward-headers';

export interface UpstreamRequest {
  method: string;
  /** Path and query string exactly as the caller sent them. */
  path: string;
  headers: OutgoingHeaders;
  body: Buffer | undefined;
}

export interface UpstreamResponse {
  status: number;
  headers: HeaderMap;
  body: Buffer;
}

const TIMEOUT_MS = 30_000;

/** A keep-alive connection pool to one control-plane service. Throws when it cannot answer. */
export class UpstreamClient {
  private readonly pool: Pool;

  constructor(origin: string) {
    this.pool = new Pool(origin, {
      connections: 64,
      keepAliveTimeout: 10_000,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
  }

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const response = await this.pool.request({
      method: request.method as Dispatcher.HttpMethod,
      path: request.path,
      headers: request.headers,
      body: request.body,
    });
    const body = Buffer.from(await response.body.arrayBuffer());
    return { status: response.statusCode, headers: response.headers, body };
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
