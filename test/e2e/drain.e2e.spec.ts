import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { Redis } from 'ioredis';
import { redisKeys } from '@svc/contracts';
import { bearer, call, freePort, splice, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK, UNTHROTTLED_GATEWAY_ENV } from '@svc/test-kit';
import type { RunningProcess } from '@svc/test-kit';

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
      splice(client, createConnection({ host: target.hostname, port: Number(target.port) }), this.sockets);
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

const PRICE_MICROS = 9_000;

describe('a gateway stopped under load loses nothing', () => {
  let balancer: Balancer;
  afterAll(() => balancer?.close());
  const suite = useStack({
    ...SETTLING_STACK, name: 'drain', redisDb: 13, logLevel: 'info', gateways: [{}, {}], gatewayEnv: { ...UNTHROTTLED_GATEWAY_ENV, SHUTDOWN_DELAY_MS: '1500' },
    // Searches take a while, so some are in flight when SIGTERM arrives.
    simulatorEnv: { SIM_BASE_LATENCY_MS: '150' },
  }, { db: true });

  beforeAll(() => {
    balancer = new Balancer(suite.stack.gateways);
  });

  it('answers every request while one of two gateways drains, and settles every answered search exactly once', async () => {
    const port = await freePort();
    await balancer.open(port);
    const front = `http://127.0.0.1:${port}`;
    const gw0 = suite.stack.gateways[0]?.url ?? '';
    const account = await newAccount(gw0, 'drain');
    await grantCredits(suite.stack, account.accountId, 100_000_000, { reason: 'drain test' });
    const redis = new Redis(suite.stack.redisUrl);
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
    const draining = suite.stack.gateways[1];
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
      const rows = await suite.db.query<{ n: string }>('SELECT count(*) AS n FROM settlements WHERE account_id = $1', [account.accountId]);
      return Number(rows.rows[0]?.n) >= answered.length ? true : undefined;
    }, { timeoutMs: 30_000 });
    const settled = await suite.db.query<{ request_id: string; charged_micros: string }>('SELECT request_id, charged_micros FROM settlements WHERE account_id = $1', [account.accountId]);
    expect(settled.rows.map((r) => r.request_id).sort()).toEqual([...answered].sort());
    expect(settled.rows.every((r) => Number(r.charged_micros) === PRICE_MICROS)).toBe(true);
    const charges = await suite.db.query<{ n: string; sum: string }>(
      "SELECT count(*) AS n, coalesce(sum(-amount_micros), 0) AS sum FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [account.accountId]);
    expect(Number(charges.rows[0]?.n)).toBe(answered.length);
    expect(Number(charges.rows[0]?.sum)).toBe(answered.length * PRICE_MICROS);
  }, 120_000);
});

/** A GET on a kept-alive connection of `agent`: the status, the `connection` header and the body. */
async function keptAliveGet(url: string, agent: Agent): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** True once a new TCP connection to `url` is refused (the listener stopped accepting). */
async function refusesConnections(url: string): Promise<boolean> {
  const target = new URL(url);
  const socket = createConnection({ host: target.hostname, port: Number(target.port) });
  try {
    await once(socket, 'connect');
    return false;
  } catch {
    return true;
  } finally {
    socket.destroy();
  }
}

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * A POST whose headers and first half of the body are sent now, and the rest when `finish`
 * is called: a request in flight for as long as the test likes. `finish` resolves with the
 * reply once the server has closed the connection.
 */
async function startSlowPost(url: string, headers: Record<string, string>, body: unknown): Promise<{ finish(): Promise<RawReply> }> {
  const target = new URL(url);
  const socket = createConnection({ host: target.hostname, port: Number(target.port) });
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = once(socket, 'close');
  const bytes = Buffer.from(JSON.stringify(body));
  const half = Math.floor(bytes.length / 2);
  const head = [
    `POST ${target.pathname} HTTP/1.1`, `host: ${target.host}`, 'content-type: application/json', `content-length: ${bytes.length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', '',
  ].join('\r\n');
  socket.write(head);
  socket.write(bytes.subarray(0, half));
  return {
    async finish(): Promise<RawReply> {
      socket.write(bytes.subarray(half));
      const timeout = new Promise<never>((_, reject) => setTimeout(() => {
        reject(new Error(`the connection was not closed; received: ${Buffer.concat(chunks).toString('utf8')}`));
      }, 10_000).unref());
      await Promise.race([closed, timeout]);
      const raw = Buffer.concat(chunks).toString('utf8');
      const end = raw.indexOf('\r\n\r\n');
      if (end === -1) throw new Error(`no reply before the connection closed: ${JSON.stringify(raw)}`);
      const [statusLine = '', ...lines] = raw.slice(0, end).split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { status: Number(statusLine.split(' ')[1]), headers: parsed, body: JSON.parse(raw.slice(end + 4)) as Record<string, unknown> };
    },
  };
}

const CONTROL_PLANE_DELAY_MS = 2_000;

/**
 * account-admin and billing stop as the gateway does (docs/operations.md "Rollouts"): on
 * SIGTERM /readyz is 503 `draining` at once, every reply says `connection: close`, they keep
 * serving for SHUTDOWN_DELAY_MS, then stop accepting, finish the request in flight (here one
 * whose body is still arriving when they stop accepting) and exit 0.
 */
describe('account-admin and billing drain on SIGTERM', () => {
  const suite = useStack({
    name: 'drain_cp', redisDb: 13, logLevel: 'info',
    accountAdminEnv: { SHUTDOWN_DELAY_MS: String(CONTROL_PLANE_DELAY_MS) }, billingEnv: { SHUTDOWN_DELAY_MS: String(CONTROL_PLANE_DELAY_MS) },
  });

  /**
   * SIGTERM to `service` with `slow` in flight: readiness of every listener turns 503 at once,
   * `during` (requests through the gateway) is answered while it drains, every listener
   * answers with `connection: close`, and stops accepting only after the delay; then the
   * slow request is answered, the process exits 0, and it logged nothing at warn or above
   * from `<name> draining` on.
   */
  async function drainsWith(
    service: RunningProcess,
    listeners: readonly string[],
    slow: { finish(): Promise<RawReply> },
    during: () => Promise<void>,
  ): Promise<RawReply> {
    const agent = new Agent({ keepAlive: true });
    try {
      for (const url of listeners) {
        const before = await keptAliveGet(`${url}/healthz`, agent);
        expect([url, before.status, before.connection]).toEqual([url, 200, 'keep-alive']);
      }
      const signalled = Date.now();
      const exited = service.stop('SIGTERM');
      for (const url of listeners) {
        const ready = await waitFor(`${url}/readyz to answer 503`, async () => {
          const reply = await call('GET', `${url}/readyz`);
          return reply.status === 503 ? reply : undefined;
        }, { timeoutMs: CONTROL_PLANE_DELAY_MS, intervalMs: 10 });
        expect(ready.body).toEqual({ status: 'draining', checks: {}, request_id: expect.any(String) });
      }
      // At once: well within the delay, and the listeners still serve.
      expect(Date.now() - signalled).toBeLessThan(CONTROL_PLANE_DELAY_MS / 2);
      for (const url of listeners) {
        const reply = await keptAliveGet(`${url}/healthz`, agent);
        expect([url, reply.status, reply.connection]).toEqual([url, 200, 'close']);
      }
      await during();
      expect(Date.now() - signalled).toBeLessThan(CONTROL_PLANE_DELAY_MS);
      for (const url of listeners) {
        await waitFor(`${url} to stop accepting`, async () => ((await refusesConnections(url)) ? true : undefined), { timeoutMs: 10_000, intervalMs: 20 });
      }
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(CONTROL_PLANE_DELAY_MS);
      // The request in flight holds the process until it is answered.
      expect(service.child.exitCode).toBeNull();
      const reply = await slow.finish();
      expect(reply.headers['connection']).toBe('close');
      await exited;
      expect([service.child.exitCode, service.child.signalCode]).toEqual([0, null]);
      // Nothing went wrong while it drained: the request in flight had every store it uses.
      const log = service.logs();
      expect(log).toContain(`${service.name} draining`);
      const drained = log.slice(log.indexOf(`${service.name} draining`)).split('\n');
      const problems = drained.filter((line) => line.startsWith('{') && (JSON.parse(line) as { level: number }).level >= 40);
      expect(problems).toEqual([]);
      return reply;
    } finally {
      agent.destroy();
    }
  }

  it('billing: both listeners unready at once, connection: close for the delay, then the request in flight is answered and it exits 0', async () => {
    const account = await newAccount(suite.gw, 'drain-billing');
    const key = await newApiKey(suite.gw, account.managementKey);
    const slow = await startSlowPost(`${suite.stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, bearer(suite.stack.operatorToken), {
      amount_usd: 3, reason: 'granted while billing drains',
    });
    const reply = await drainsWith(suite.stack.billing.process, [suite.stack.billing.url, suite.stack.billing.operatorUrl], slow, async () => {
      const credits = await call('GET', `${suite.gw}/v1/credits`, { headers: bearer(key.secret) });
      expect(credits.status).toBe(200);
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ account_id: account.accountId, kind: 'grant' });
  }, 60_000);

  it('account-admin: unready at once, connection: close for the delay, then the request in flight is answered and it exits 0', async () => {
    const account = await newAccount(suite.gw, 'drain-admin');
    const email = `drain-slow-${Date.now()}@example.com`;
    const slow = await startSlowPost(`${suite.stack.accountAdmin.url}/dashboard/api/signup`, {}, { email, password: 'correct horse battery staple' });
    const reply = await drainsWith(suite.stack.accountAdmin.process, [suite.stack.accountAdmin.url], slow, async () => {
      const me = await call('GET', `${suite.gw}/dashboard/api/me`, { headers: account.session });
      expect(me.status).toBe(200);
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ account_id: expect.any(String), email });
  }, 60_000);
});
