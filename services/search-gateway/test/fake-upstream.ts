import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake provider received, its body read whole. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the fake answers: a status and a body, or `hang` (no answer until the fake closes). */
export type CannedReply = { status: number; body: string } | 'hang';

/**
 * A provider's HTTP API on loopback for the adapter specs: every request is recorded in
 * `seen` and answered with `reply` (JSON), which a test sets before it calls the adapter.
 */
export class FakeUpstream {
  readonly seen: SeenRequest[] = [];
  reply: CannedReply = { status: 200, body: '{}' };
  private readonly hanging: ServerResponse[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeUpstream> {
    const server = createServer();
    const fake = new FakeUpstream(server);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => fake.answer({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body }, response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** http://127.0.0.1:<port>, no trailing slash. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(request: SeenRequest, response: ServerResponse): void {
    this.seen.push(request);
    if (this.reply === 'hang') {
      this.hanging.push(response);
      return;
    }
    response.writeHead(this.reply.status, { 'content-type': 'application/json' });
    response.end(this.reply.body);
  }
}

/**
 * For the calling `describe`: a FakeUpstream and the adapter `make` builds on its URL, started
 * before the tests, `seen` emptied before each one, both closed after (the adapter first).
 */
export function useUpstream<A extends { close(): Promise<void> }>(make: (url: string) => A): { readonly upstream: FakeUpstream; readonly adapter: A } {
  let upstream: FakeUpstream | undefined;
  let adapter: A | undefined;
  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    adapter = make(upstream.url);
  });
  afterAll(async () => {
    await adapter?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    if (upstream !== undefined) upstream.seen.length = 0;
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the fake upstream has not started: read it inside a hook or a test');
    return value;
  };
  return {
    get upstream() {
      return started(upstream);
    },
    get adapter() {
      return started(adapter);
    },
  };
}
