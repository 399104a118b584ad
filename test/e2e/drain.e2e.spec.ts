import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { Client } from 'pg';
import { Redis } from 'ioredis';
import { redisKeys } from '@svc/contracts';
import { bearer, call, freePort, newAccount, newApiKey, startStack, waitFor } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';

/**
 * A loopback load balancer in the manner of a Kubernetes Service: round robin over the
 * backends whose /readyz answered 200 at the last poll (every 100 ms), one backend per
 * client connection, bytes piped both ways.
 */
class Balancer {
  private server: Server | null = null;
  private readonly ready = new Set<number>();
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly backends: readonly { url: string }[]) {}

  async open(port: number): Promise<void> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), 100);
    const server = createServer((client) => {
      const choices = this.backends.map((_, i) => i).filter((i) => this.ready.has(i));
      const chosen = choices[this.next++ % Math.max(1, choices.length)];
      const backend = chosen === undefined ? undefined : this.backends[chosen];
      if (backend === undefined) {
        client.destroy();
        return;
      }
      const target = new URL(backend.url);
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    this.server = server;
  }

  private async poll(): Promise<void> {
    await Promise.all(this.backends.map(async (backend, i) => {
      const status = await fetch(`${backend.url}/readyz`).then((r) => r.status, () => 0);
      if (status === 200) this.ready.add(i);
      else this.ready.delete(i);
    }));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server === null ? resolve() : this.server.close(() => resolve())));
  }
}

const PRICE_MICROS = 5_000;

describe('a gateway stopped under load loses nothing', () => {
  let stack: Stack;
  let balancer: Balancer;
  let db: Client;

  beforeAll(async () => {
    stack = await startStack({
      name: 'drain',
      redisDb: 13,
      simulator: true,
      // Searches take a while, so some are in flight when SIGTERM arrives.
      simulatorEnv: { SIM_BASE_LATENCY_MS: '150' },
      worker: true,
      workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100' },
      logLevel: 'info',
      gatewayEnv: {
        SHUTDOWN_DELAY_MS: '1500', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ACCOUNT_MAX_IN_FLIGHT: '100000', PROVIDER_MAX_IN_FLIGHT_EXA: '1000',
      },
      gateways: [{}, {}],
    });
    balancer = new Balancer(stack.gateways);
    db = new Client({ connectionString: stack.databases.billing });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await balancer?.close();
    await db?.end();
    await stack?.stop();
  });

  it('answers every request while one of two gateways drains, and settles every answered search exactly once', async () => {
    const port = await freePort();
    await balancer.open(port);
    const front = `http://127.0.0.1:${port}`;
    const gw0 = stack.gateways[0]?.url ?? '';
    const account = await newAccount(gw0, 'drain');
    const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
      body: { amount_usd: 100, reason: 'drain test' }, headers: bearer(stack.operatorToken),
    });
    expect(grant.status).toBe(201);
    const redis = new Redis(stack.redisUrl);
    await waitFor('the grant in Redis', async () => ((await redis.get(redisKeys.accountBalance(account.accountId))) === '100000000' ? true : undefined));
    redis.disconnect();
    const key = await newApiKey(gw0, account.managementKey);

    const answered: string[] = [];
    const failures: string[] = [];
    let running = true;
    let n = 0;
    const client = async (): Promise<void> => {
      while (running) {
        const i = n++;
        try {
          const reply = await call('POST', `${front}/v1/search`, { body: { query: `drain ${i}`, model: 'exa/fast', max_results: 10 }, headers: bearer(key.secret) });
          if (reply.status === 200) answered.push(String(reply.body.request_id));
          else failures.push(`${reply.status} ${reply.text}`);
        } catch (error) {
          failures.push(`request failed: ${error instanceof Error ? `${error.message} ${String(error.cause)}` : String(error)}`);
        }
      }
    };
    const clients = Array.from({ length: 8 }, () => client());
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const draining = stack.gateways[1];
    if (draining === undefined) throw new Error('no second gateway');
    const answeredBeforeStop = answered.length;
    const stopped = draining.process.stop('SIGTERM');
    await stopped;
    // The load goes on against the gateway left, then stops.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    running = false;
    await Promise.all(clients);

    expect(failures).toEqual([]);
    expect(draining.process.child.exitCode).toBe(0);
    expect(answeredBeforeStop).toBeGreaterThan(10);
    expect(answered.length).toBeGreaterThan(answeredBeforeStop);
    const drainedLog = draining.process.logs();
    expect(drainedLog).toContain('search-gateway draining');
    // The drained gateway answered searches, some of them after SIGTERM (while unready).
    const lines = drainedLog.split('\n').filter((l) => l.includes('"route":"/v1/search"') && l.includes('"status":200'));
    expect(lines.length).toBeGreaterThan(0);

    // Every answered search is in the ledger exactly once, with its charge.
    await waitFor('the ledger worker to write every settlement', async () => {
      const rows = await db.query<{ n: string }>('SELECT count(*) AS n FROM settlements WHERE account_id = $1', [account.accountId]);
      return Number(rows.rows[0]?.n) >= answered.length ? true : undefined;
    }, { timeoutMs: 30_000 });
    const settled = await db.query<{ request_id: string; charged_micros: string }>('SELECT request_id, charged_micros FROM settlements WHERE account_id = $1', [account.accountId]);
    expect(settled.rows.map((r) => r.request_id).sort()).toEqual([...answered].sort());
    expect(settled.rows.every((r) => Number(r.charged_micros) === PRICE_MICROS)).toBe(true);
    const charges = await db.query<{ n: string; sum: string }>(
      "SELECT count(*) AS n, coalesce(sum(-amount_micros), 0) AS sum FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [account.accountId]);
    expect(Number(charges.rows[0]?.n)).toBe(answered.length);
    expect(Number(charges.rows[0]?.sum)).toBe(answered.length * PRICE_MICROS);
  }, 120_000);
});
