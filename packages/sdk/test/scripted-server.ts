import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** When the request had fully arrived (ms, performance.now()). */
  at: number;
}

/** What the server does with one request. */
export type Step = (req: IncomingMessage, res: ServerResponse) => void;

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Step => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

export const text = (status: number, body: string, headers: Record<string, string> = {}): Step => (_req, res) => {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers });
  res.end(body);
};

/** An error body as the API writes it, with the request id in the header and the body. */
export const apiError = (status: number, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Step => {
  const requestId = `req_${code.replace(/_/g, '').slice(0, 10).padEnd(24, 'x')}`;
  return json(status, { error: { code, message: `the server says ${code}`, request_id: requestId, ...extra } }, { 'x-svc-request-id': requestId, ...headers });
};

/** Closes the connection without any response. */
export const reset: Step = (req) => {
  req.socket.destroy();
};

/** Never answers (until the server closes). */
export const hang: Step = () => undefined;

/** Sends the status and headers and part of the body, then nothing more. */
export const stall: Step = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
  res.write('{"partial":');
};

/**
 * A loopback HTTP server that answers the n-th request with the n-th step of its script
 * (the last step repeats) and records every request.
 */
export class ScriptedServer {
  readonly seen: Seen[] = [];
  url = '';
  #server: Server;
  #script: Step[] = [];

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
        const step = this.#script[Math.min(this.seen.length - 1, this.#script.length - 1)];
        if (step === undefined) throw new Error('no script');
        step(req, res);
      });
    });
  }

  static async start(): Promise<ScriptedServer> {
    const server = new ScriptedServer();
    await server.#listen();
    return server;
  }

  /** A server for the calling `describe`: listening from its beforeAll (read `url` inside a hook or a test), closed in its afterAll. */
  static forSuite(): ScriptedServer {
    const server = new ScriptedServer();
    beforeAll(() => server.#listen());
    afterAll(() => server.close());
    return server;
  }

  async #listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Replaces the script and forgets the requests seen so far. */
  script(...steps: Step[]): this {
    this.#script = steps;
    this.seen.length = 0;
    return this;
  }

  /** The parsed JSON body of the n-th request. */
  bodyOf(n: number): unknown {
    const body = this.seen[n]?.body ?? '';
    return body === '' ? undefined : JSON.parse(body);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.#server.close((error) => (error === undefined ? resolve() : reject(error))));
  }
}
