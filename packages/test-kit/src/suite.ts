import { Client } from 'pg';
import type { RedisClient } from '@svc/redis-client';
import { startStack, stopStack } from './stack';
import type { Stack, StackOptions } from './stack';

/**
 * The stack most end-to-end suites search on: the provider simulator, the ledger worker
 * draining every 100 ms, and warnings and worse logged. Spread it and add the suite's own:
 * `{ ...SETTLING_STACK, name: 'mcp', redisDb: 12 }`.
 */
export const SETTLING_STACK = {
  simulator: true,
  worker: true,
  workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100' },
  logLevel: 'warn',
} as const satisfies Partial<StackOptions>;

/** What a suite reads once `useStack` has started its stack (inside a hook or a test). */
export interface StackSuite {
  readonly stack: Stack;
  /** The first gateway's URL. */
  readonly gw: string;
  /** The URL of the gateway at `index` in `stack.gateways`. */
  gateway(index: number): string;
  /** The provider simulator's URL ('' on a stack without one). */
  readonly sim: string;
  /** A client of the stack's Redis, opened on first use and closed after the suite. */
  readonly redis: RedisClient;
  /** A connected client of billing's database (`{ db: true }`), closed after the suite. */
  readonly db: Client;
  /** A connected client of account-admin's database (`{ accountsDb: true }`), closed after the suite. */
  readonly accountsDb: Client;
}

export interface StackSuiteOptions {
  /** Connect a client to billing's database with the stack. */
  db?: boolean;
  /** Connect a client to account-admin's database with the stack. */
  accountsDb?: boolean;
  /** How long starting the stack may take (default 120 s). */
  timeoutMs?: number;
}

type Hook = (fn: () => Promise<void>, timeoutMs?: number) => void;

/** A database client the suite asked for with `{ [option]: true }` (connected by then). */
function askedFor(client: Client | undefined, what: string, option: keyof StackSuiteOptions): Client {
  if (client === undefined) throw new Error(`${what} is connected only with useStack(…, { ${option}: true })`);
  return client;
}

/**
 * Starts a stack in the calling `describe`'s beforeAll and stops it, with the clients the
 * suite opened, in its afterAll. Hooks run in the order they are declared: a `beforeAll`
 * declared before this call runs before the stack starts (`options` may be a function, read
 * then), an `afterAll` declared before it runs before the stack stops.
 */
export function useStack(options: StackOptions | (() => StackOptions), { db = false, accountsDb = false, timeoutMs = 120_000 }: StackSuiteOptions = {}): StackSuite {
  const { beforeAll, afterAll } = globalThis as unknown as { beforeAll: Hook; afterAll: Hook };
  let stack: Stack | undefined;
  let redis: RedisClient | undefined;
  let billingDb: Client | undefined;
  let accountAdminDb: Client | undefined;
  const connect = async (url: string): Promise<Client> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    return client;
  };
  beforeAll(async () => {
    stack = await startStack(typeof options === 'function' ? options() : options);
    if (db) billingDb = await connect(stack.databases.billing);
    if (accountsDb) accountAdminDb = await connect(stack.databases.accountAdmin);
  }, timeoutMs);
  afterAll(async () => {
    await accountAdminDb?.end();
    await stopStack(stack, { redis, db: billingDb });
  });
  const started = (): Stack => {
    if (stack === undefined) throw new Error('the stack has not started: read it inside a hook or a test');
    return stack;
  };
  return {
    get stack() {
      return started();
    },
    get gw() {
      return started().gateways[0]?.url ?? '';
    },
    gateway(index: number) {
      return started().gateways[index]?.url ?? '';
    },
    get sim() {
      return started().simulator?.url ?? '';
    },
    get redis() {
      redis ??= started().redisClient();
      return redis;
    },
    get db() {
      return askedFor(billingDb, 'billing\'s database', 'db');
    },
    get accountsDb() {
      return askedFor(accountAdminDb, 'account-admin\'s database', 'accountsDb');
    },
  };
}
