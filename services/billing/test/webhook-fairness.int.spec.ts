import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { waitFor, WebhookReceiver } from '@svc/test-kit';
import { createBillingDatabase } from '../src/db/prisma.repository';
import { parseWebhookConfig } from '../src/services/outbound-webhooks/webhook-config';
import { api, checkout, newAccount, startStripeHarness, startTestWebhookProcessor } from './stripe-harness';
import type { StripeHarness, TestOutbound } from './stripe-harness';

/**
 * Webhook delivery is fair between accounts (issue 45, item 6): one account whose endpoints
 * never answer (a tarpit: the request is read, no answer ever comes, until the worker's own
 * timeout ends the attempt) holds at most its share of the worker's delivery slots, so another
 * account's event is delivered while the tarpit's attempts are still hanging. The delivery
 * processor runs in-process with the worker's defaults (slots, per-account share, timeout).
 */
class Tarpit {
  /** Requests received, still open, and ended by the caller (the worker's timeout). */
  received = 0;
  open = 0;
  ended = 0;
  maxOpen = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<Tarpit> {
    const holder: { tarpit?: Tarpit } = {};
    const server = createServer((request: IncomingMessage) => {
      const tarpit = holder.tarpit;
      if (tarpit === undefined) return;
      tarpit.received += 1;
      tarpit.open += 1;
      tarpit.maxOpen = Math.max(tarpit.maxOpen, tarpit.open);
      request.resume();
      request.socket.once('close', () => {
        tarpit.open -= 1;
        tarpit.ended += 1;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const tarpit = new Tarpit(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    holder.tarpit = tarpit;
    server.on('connection', (socket: Socket) => {
      tarpit.sockets.add(socket);
      socket.on('close', () => tarpit.sockets.delete(socket));
    });
    return tarpit;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let h: StripeHarness;
let db: ReturnType<typeof createBillingDatabase>;
let processor: TestOutbound | undefined;
let tarpit: Tarpit | undefined;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  h = await startStripeHarness('webhook_fairness', { env: { WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true' } });
  db = createBillingDatabase(h.databaseUrl, () => undefined);
}, 60_000);

afterAll(async () => {
  // The tarpit's sockets end first, so the hanging attempts end and the worker closes at once.
  await tarpit?.stop();
  await processor?.close();
  await receiver?.stop();
  await db?.close();
  await h?.close();
}, 60_000);

async function purchase(accountId: string, usd: number): Promise<void> {
  const { stripeSessionId } = await checkout(h, accountId, usd);
  const paid = await h.stripe.deliver(h.stripe.event('checkout.session.completed', h.stripe.completeSession(stripeSessionId)), { url: h.webhookUrl });
  expect(paid.status).toBe(200);
}

describe('webhook delivery between accounts', () => {
  it('delivers another account\'s event while one account\'s tarpit endpoints hold their attempts open', async () => {
    tarpit = await Tarpit.start();
    receiver = await WebhookReceiver.start();
    // The worker's defaults but the loopback permission and a quick dispatch: every slot, share and timeout as deployed.
    const config = parseWebhookConfig({ WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true', WEBHOOK_DISPATCH_INTERVAL_MS: '50' });
    processor = await startTestWebhookProcessor(h, db, { config });

    // A free account with the most endpoints it may have, every one a tarpit, and two events: 32 deliveries.
    const noisy = await newAccount(h);
    for (let i = 0; i < 16; i++) {
      const created = await api(h, 'POST', noisy, '/v1/webhook-endpoints', { url: `${tarpit.url}/hook-${i}`, events: ['credits.purchased'] });
      expect(created.status).toBe(201);
    }
    await purchase(noisy, 5);
    await purchase(noisy, 6);
    const hanging = tarpit;
    await waitFor('the tarpit holding attempts open', () => (hanging.open > 0 ? true : undefined));

    // Another account's event, while they hang.
    const quiet = await newAccount(h);
    expect((await api(h, 'POST', quiet, '/v1/webhook-endpoints', { url: receiver.url, events: ['credits.purchased'] })).status).toBe(201);
    await purchase(quiet, 7);
    const hook = receiver;
    await waitFor('the other account\'s delivery', () => (hook.accepted().length > 0 ? true : undefined), { timeoutMs: 40_000 });

    // Delivered before any tarpit attempt ended: it waited for no slot the tarpit held.
    expect(hanging.ended).toBe(0);
    expect(hanging.open).toBeGreaterThan(0);
    expect(JSON.parse(hook.accepted()[0]?.rawBody ?? '{}')).toMatchObject({ type: 'credits.purchased', account_id: quiet });
    // The tarpit account never held more than its share of the slots (the default), and less than all of them.
    expect(hanging.maxOpen).toBeLessThanOrEqual(config.WEBHOOK_ACCOUNT_CONCURRENCY);
    expect(config.WEBHOOK_ACCOUNT_CONCURRENCY).toBeLessThan(config.WEBHOOK_CONCURRENCY);
  }, 90_000);
});
