import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

/**
 * A TCP relay on a fixed local port to a real server (e.g. Redis), which a test can cut
 * (listener closed, every connection reset: the client sees a refused connection) and open
 * again on the same port, to put a real outage between a client and its server.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      splice(client, createConnection(this.target), this.sockets);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server === null) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }
}

/**
 * Pipes `client` and `upstream` both ways, each tracked in `sockets` while open; an error on
 * either destroys both (a proxy's or a load balancer's connection).
 */
export function splice(client: Socket, upstream: Socket, sockets: Set<Socket>): void {
  for (const socket of [client, upstream]) {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {
      client.destroy();
      upstream.destroy();
    });
  }
  client.pipe(upstream);
  upstream.pipe(client);
}
