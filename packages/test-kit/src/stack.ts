import { randomBytes } from 'node:crypto';
import { closeRedisClient, createRedisClient, masters } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import { redisKeys } from '@svc/contracts';
import { join } from 'node:path';
import { Client } from 'pg';
import { applyMigrations } from '@svc/pg-migrate';
import { freePort } from './ports';
import { recreateDatabase } from './databases';
import { redisUrl } from './redis';
import { startRedisCluster } from './redis-cluster';
import type { RedisCluster } from './redis-cluster';
import { repoRoot } from './paths';
import { startProcess } from './processes';
import { waitFor } from './wait';
import type { RunningProcess } from './processes';

/** The provider keys the simulator accepts unless told otherwise (tools/provider-sim). */
export const SIMULATOR_KEYS = { brave: 'sim-brave-key', exa: 'sim-exa-key', tavily: 'tvly-sim-key' } as const;

/**
 * The platform as separate processes started from dist/: account-admin, billing and one or
 * more gateways, on fresh databases and one Redis database, with free ports.
 */
export interface Stack {
  /** `metricsUrl`: each process's metrics listener (METRICS_PORT, a free port), e.g. `${metricsUrl}/metrics`. */
  gateways: { url: string; metricsUrl: string; process: RunningProcess }[];
  /** The provider simulator, when `simulator` was asked for; the gateways point at it. */
  simulator?: { url: string; process: RunningProcess };
  /** The ledger worker, when `worker` was asked for. */
  worker?: { url: string; metricsUrl: string; process: RunningProcess };
  /** The research worker, when `researchWorker` was asked for (the latest one started). */
  researchWorker?: { url: string; metricsUrl: string; process: RunningProcess };
  /** Starts another research worker with the stack's settings (after a test stopped or killed one); it becomes `researchWorker`. */
  startResearchWorker(): Promise<{ url: string; metricsUrl: string; process: RunningProcess }>;
  accountAdmin: { url: string; grpc: string; metricsUrl: string; process: RunningProcess };
  billing: { url: string; operatorUrl: string; metricsUrl: string; process: RunningProcess };
  /** REDIS_URL of every service: one Redis database, or the cluster's seed list. */
  redisUrl: string;
  /** REDIS_URL and REDIS_CLUSTER together. */
  redisTarget: RedisTarget;
  /** The Redis Cluster the stack started (`cluster: true`), with its helpers (slot migration, flush). */
  redisCluster?: RedisCluster;
  /** A new client of the stack's Redis (a Cluster client on a cluster); the caller closes it. */
  redisClient(): RedisClient;
  /** Empties the stack's Redis: FLUSHDB of its database, or FLUSHALL on every master of its cluster. */
  flushRedis(): Promise<void>;
  databases: { accountAdmin: string; billing: string };
  operatorToken: string;
  /** The provider-key KEK the services were started with. */
  kek: { id: string; key: string };
  logs(): string;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Short name: databases are svc_e2e_<name>_*. */
  name: string;
  /** The Redis database of a single-node stack (ignored with `cluster`: a cluster has database 0 only). */
  redisDb: number;
  /**
   * Run on a Redis Cluster of its own instead: 3 masters started on loopback for this stack
   * (test-kit startRedisCluster), every service with REDIS_CLUSTER=true and the seed list.
   */
  cluster?: boolean;
  /** With `cluster`: replicas of each master (default 0), for failover tests. */
  clusterReplicas?: number;
  /**
   * One entry per gateway process; `script`: another build of the gateway for that one;
   * `readyTimeoutMs`: how long its readiness may take (a gateway under valgrind starts slowly).
   */
  gateways?: { env?: Record<string, string>; script?: string; readyTimeoutMs?: number }[];
  gatewayEnv?: Record<string, string>;
  /** Another build of the gateway to start (benchmarks comparing two versions). */
  gatewayScript?: string;
  /** Start the provider simulator and configure all three providers on every gateway. */
  simulator?: boolean;
  /** Extra environment for the simulator (e.g. SIM_BASE_LATENCY_MS). */
  simulatorEnv?: Record<string, string>;
  /** Start billing's ledger worker (dist/worker.js); extra environment for it. */
  worker?: boolean;
  workerEnv?: Record<string, string>;
  /** Start billing's research worker (dist/research-worker.js), pointed at the simulator when there is one; extra environment for it. */
  researchWorker?: boolean;
  researchWorkerEnv?: Record<string, string>;
  /**
   * Extra environment for account-admin. Sign-in rate limits are lifted unless set here:
   * every test signs up from 127.0.0.1. SHUTDOWN_DELAY_MS is 0 unless set here (as for
   * billing), so stopping a stack does not wait the drain delay. SIGNUP_CONFIRMATION is `off`
   * unless set here (suites sign up many accounts and need each at once; the mail suites set
   * `required` with `smtpEnv` of a MailCatcher).
   */
  accountAdminEnv?: Record<string, string>;
  /** Extra environment for billing (e.g. STRIPE_SECRET_KEY, STRIPE_API_BASE, STRIPE_WEBHOOK_SECRET). */
  billingEnv?: Record<string, string>;
  /** The provider-key KEK of every service (default: a fresh random one, id `kek-test`). */
  kek?: { id: string; key: string };
  /** LOG_LEVEL of every service (default debug, so tests see everything that is logged). */
  logLevel?: string;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const root = repoRoot();
  const redisCluster = options.cluster === true ? await startRedisCluster({ replicasPerMaster: options.clusterReplicas ?? 0 }) : undefined;
  const redis = redisCluster?.url ?? redisUrl(options.redisDb);
  const redisTarget: RedisTarget = { url: redis, cluster: redisCluster !== undefined };
  const flushRedis = async (): Promise<void> => {
    const client = createRedisClient(redisTarget);
    try {
      if (redisCluster !== undefined) await redisCluster.flushAll();
      else for (const node of masters(client)) await node.flushdb();
    } finally {
      await closeRedisClient(client);
    }
  };
  await flushRedis();
  const accountAdminDb = await recreateDatabase(`svc_e2e_${options.name}_accounts`);
  const billingDb = await recreateDatabase(`svc_e2e_${options.name}_billing`);
  await applyMigrations(accountAdminDb, join(root, 'services/account-admin/prisma/migrations'));
  await applyMigrations(billingDb, join(root, 'services/billing/prisma/migrations'));
  const internalToken = randomBytes(24).toString('base64url');
  const operatorToken = randomBytes(24).toString('base64url');
  const started: RunningProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const p of started.reverse()) await p.stop();
    await redisCluster?.stop();
  };
  try {
    const [aaHttp, aaGrpc, billHttp, billOp, aaMetrics, billMetrics, firstGatewayPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
    // The first gateway's URL is the stack's public base URL (the OAuth issuer and connector resource, decision 0029).
    const publicBaseUrl = `http://127.0.0.1:${firstGatewayPort}`;
    const kek = options.kek ?? { id: 'kek-test', key: randomBytes(32).toString('base64') };
    const common = {
      REDIS_URL: redis, REDIS_CLUSTER: String(redisCluster !== undefined), INTERNAL_TOKEN: internalToken, LOG_LEVEL: options.logLevel ?? 'debug', HOST: '127.0.0.1',
    };
    // The provider-key KEK goes to account-admin and the gateways only.
    const kekEnv = { PROVIDER_KEY_KEK: kek.key, PROVIDER_KEY_KEK_ID: kek.id };
    const accountAdmin = await startProcess({
      name: 'account-admin',
      script: join(root, 'services/account-admin/dist/main.js'),
      env: {
        ...common, ...kekEnv, PORT: String(aaHttp), GRPC_PORT: String(aaGrpc), METRICS_PORT: String(aaMetrics), DATABASE_URL: accountAdminDb, COOKIE_SECURE: 'false',
        PUBLIC_BASE_URL: publicBaseUrl,
        SIGN_IN_ATTEMPTS_PER_EMAIL: '1000000', SIGN_IN_ATTEMPTS_PER_ADDRESS: '1000000', SHUTDOWN_DELAY_MS: '0', SIGNUP_CONFIRMATION: 'off',
        BILLING_HTTP_URL: `http://127.0.0.1:${billHttp}`, ...options.accountAdminEnv,
      },
      readyUrl: `http://127.0.0.1:${aaHttp}/readyz`,
    });
    started.push(accountAdmin);
    const billing = await startProcess({
      name: 'billing',
      script: join(root, 'services/billing/dist/main.js'),
      env: {
        ...common, PORT: String(billHttp), OPERATOR_PORT: String(billOp), METRICS_PORT: String(billMetrics), DATABASE_URL: billingDb,
        OPERATOR_TOKEN: operatorToken, ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${aaGrpc}`, SHUTDOWN_DELAY_MS: '0', WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true',
        ...options.billingEnv,
      },
      readyUrl: `http://127.0.0.1:${billHttp}/readyz`,
    });
    started.push(billing);
    let simulator: Stack['simulator'];
    let providerEnv: Record<string, string> = {};
    if (options.simulator === true) {
      const port = await freePort();
      const process = await startProcess({
        name: 'provider-sim',
        script: join(root, 'tools/provider-sim/dist/main.js'),
        env: { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...options.simulatorEnv },
        readyUrl: `http://127.0.0.1:${port}/healthz`,
      });
      started.push(process);
      const url = `http://127.0.0.1:${port}`;
      simulator = { url, process };
      providerEnv = {
        BRAVE_API_KEY: SIMULATOR_KEYS.brave, EXA_API_KEY: SIMULATOR_KEYS.exa, TAVILY_API_KEY: SIMULATOR_KEYS.tavily,
        BRAVE_BASE_URL: `${url}/brave/res/v1`, EXA_BASE_URL: `${url}/exa`, TAVILY_BASE_URL: `${url}/tavily`,
      };
    }
    let worker: Stack['worker'];
    if (options.worker === true) {
      const [port, metricsPort] = await Promise.all([freePort(), freePort()]);
      const process = await startProcess({
        name: 'ledger-worker',
        script: join(root, 'services/billing/dist/worker.js'),
        env: { ...common, PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: billingDb, ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${aaGrpc}`, WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true', ...options.workerEnv },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
      });
      started.push(process);
      worker = { url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}`, process };
    }
    const startResearchWorker = async (): Promise<{ url: string; metricsUrl: string; process: RunningProcess }> => {
      const [port, metricsPort] = await Promise.all([freePort(), freePort()]);
      const research = await startProcess({
        name: 'research-worker',
        script: join(root, 'services/billing/dist/research-worker.js'),
        env: {
          ...common, PORT: String(port), METRICS_PORT: String(metricsPort), DATABASE_URL: billingDb, SHUTDOWN_DELAY_MS: '0',
          ...(providerEnv.EXA_API_KEY === undefined ? {} : {
            EXA_API_KEY: providerEnv.EXA_API_KEY, EXA_BASE_URL: providerEnv.EXA_BASE_URL ?? '', TAVILY_API_KEY: providerEnv.TAVILY_API_KEY ?? '', TAVILY_BASE_URL: providerEnv.TAVILY_BASE_URL ?? '',
          }),
          ...options.researchWorkerEnv,
        },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
      });
      started.push(research);
      const running = { url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}`, process: research };
      stack.researchWorker = running;
      return running;
    };
    const gateways: Stack['gateways'] = [];
    for (const [index, gw] of (options.gateways ?? [{}]).entries()) {
      const [freshPort, metricsPort] = await Promise.all([freePort(), freePort()]);
      const port = index === 0 ? firstGatewayPort : freshPort;
      const process = await startProcess({
        name: `search-gateway-${index}`,
        script: gw.script ?? options.gatewayScript ?? join(root, 'services/search-gateway/dist/main.js'),
        env: {
          ...common, ...kekEnv, PORT: String(port), METRICS_PORT: String(metricsPort), ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${aaGrpc}`,
          ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${aaHttp}`, BILLING_HTTP_URL: `http://127.0.0.1:${billHttp}`, PUBLIC_BASE_URL: publicBaseUrl,
          // Stopping a test stack does not wait the drain delay unless a test sets it (the drain test).
          SHUTDOWN_DELAY_MS: '0',
          // The result cache is off in a test stack unless a test turns it on (CACHE_ENABLED=true):
          // suites that repeat a search expect each repeat to reach the provider at the full price.
          CACHE_ENABLED: 'false',
          // The provider breaker only counts in a test stack unless a test turns it on: many suites make
          // a provider fail on purpose, and on a loaded machine the shared window would open the breaker
          // mid-suite and turn the next searches into 503s (the breaker's own suites enable it).
          PROVIDER_BREAKER_ENABLED: 'false',
          ...providerEnv, ...options.gatewayEnv, ...gw.env,
        },
        readyUrl: `http://127.0.0.1:${port}/readyz`,
        ...(gw.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: gw.readyTimeoutMs }),
      });
      started.push(process);
      gateways.push({ url: `http://127.0.0.1:${port}`, metricsUrl: `http://127.0.0.1:${metricsPort}`, process });
    }
    const stack: Stack = {
      gateways,
      simulator,
      worker,
      startResearchWorker,
      accountAdmin: { url: `http://127.0.0.1:${aaHttp}`, grpc: `127.0.0.1:${aaGrpc}`, metricsUrl: `http://127.0.0.1:${aaMetrics}`, process: accountAdmin },
      billing: { url: `http://127.0.0.1:${billHttp}`, operatorUrl: `http://127.0.0.1:${billOp}`, metricsUrl: `http://127.0.0.1:${billMetrics}`, process: billing },
      redisUrl: redis,
      redisTarget,
      ...(redisCluster === undefined ? {} : { redisCluster }),
      redisClient: () => createRedisClient(redisTarget),
      flushRedis,
      databases: { accountAdmin: accountAdminDb, billing: billingDb },
      operatorToken,
      kek,
      logs: () => started.map((p) => `--- ${p.name}\n${p.logs()}`).join('\n'),
      stop,
    };
    if (options.researchWorker === true) await startResearchWorker();
    return stack;
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are checked field by field
  body: any;
  text: string;
}

export async function call(
  method: string,
  url: string,
  { body, headers = {}, raw }: { body?: unknown; headers?: Record<string, string>; raw?: string } = {},
): Promise<JsonResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (raw !== undefined) {
    init.body = raw;
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });

/** Signs up a dashboard user (a new account) through the gateway and makes a management key. */
export async function newAccount(gateway: string, label = 'e2e'): Promise<{ accountId: string; managementKey: string; session: Record<string, string> }> {
  const email = `${label}-${randomBytes(6).toString('hex')}@example.com`;
  const signup = await call('POST', `${gateway}/dashboard/api/signup`, { body: { email, password: 'correct horse battery staple' } });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
  const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const session = { cookie, 'x-csrf-token': String(signup.body.csrf_token) };
  const mgmt = await call('POST', `${gateway}/dashboard/api/management-keys`, { body: { name: 'e2e' }, headers: session });
  if (mgmt.status !== 201) throw new Error(`management key failed: ${mgmt.status} ${mgmt.text}`);
  return { accountId: String(signup.body.account_id), managementKey: String(mgmt.body.secret), session };
}

/** Creates an API key with the management key; returns the created record and its secret. */
export async function newApiKey(gateway: string, managementKey: string, fields: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const created = await call('POST', `${gateway}/v1/keys`, { body: { name: 'k', ...fields }, headers: bearer(managementKey) });
  if (created.status !== 201) throw new Error(`key create failed: ${created.status} ${created.text}`);
  return { id: String(created.body.id), secret: String(created.body.secret) };
}

/**
 * Grants `micros` of credits to an account with the operator API (it must answer 201). Given
 * the stack's Redis, waits until the account's spendable balance there is exactly `micros`
 * (a new account's first grant, once billing has applied it).
 */
export async function grantCredits(
  stack: Pick<Stack, 'billing' | 'operatorToken'>,
  accountId: string,
  micros: number,
  options: { redis?: RedisClient; reason?: string } = {},
): Promise<void> {
  const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${accountId}/grants`, {
    body: { amount_usd: micros / 1_000_000, reason: options.reason ?? 'e2e funding' },
    headers: bearer(stack.operatorToken),
  });
  if (grant.status !== 201) throw new Error(`grant failed: ${grant.status} ${grant.text}`);
  const { redis } = options;
  if (redis !== undefined) {
    await waitFor('the grant to reach the spendable balance', async () => ((await redis.get(redisKeys.accountBalance(accountId))) === String(micros) ? true : undefined));
  }
}

/** The gateway limits lifted for a load of searches (rate limit, in-flight caps, Exa's slots). */
export const UNTHROTTLED_GATEWAY_ENV: Readonly<Record<string, string>> = {
  PROVIDER_MAX_IN_FLIGHT_EXA: '1000', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ACCOUNT_MAX_IN_FLIGHT: '100000',
};

/** A client of the stack's Redis and one of billing's database (connected), for the suites that read both. */
export async function stackClients(stack: Stack): Promise<{ redis: RedisClient; db: Client }> {
  const redis = stack.redisClient();
  const db = new Client({ connectionString: stack.databases.billing });
  await db.connect();
  return { redis, db };
}

/** Closes the clients a suite opened, then stops the stack; any may be missing (a beforeAll that failed). */
export async function stopStack(stack: Stack | undefined, clients: { redis?: { disconnect(): void }; db?: Client } = {}): Promise<void> {
  await clients.db?.end();
  clients.redis?.disconnect();
  await stack?.stop();
}
