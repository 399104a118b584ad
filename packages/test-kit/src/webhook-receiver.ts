import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedWebhook {
  rawBody: string;
  signature: string | undefined;
  /** What the receiver answered. */
  status: number;
  at: number;
}

/**
 * A webhook receiver on a loopback port, for tests: records every POST (raw body and
 * svc-signature) and answers `status` (200 by default; set 503 to play a receiver that is down).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  status = 200;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(path = '/hooks'): Promise<WebhookReceiver> {
    const holder: { receiver?: WebhookReceiver } = {};
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const receiver = holder.receiver;
        const status = receiver?.status ?? 500;
        const header = req.headers['svc-signature'];
        receiver?.received.push({ rawBody: Buffer.concat(chunks).toString('utf8'), signature: Array.isArray(header) ? header[0] : header, status, at: Date.now() });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'down');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}${path}`);
    holder.receiver = receiver;
    server.on('connection', (socket: Socket) => {
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    return receiver;
  }

  /** The deliveries it answered with a 2xx. */
  accepted(): ReceivedWebhook[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
