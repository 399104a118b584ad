import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server as HttpServer, ServerResponse } from 'node:http';
import { status } from '@grpc/grpc-js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { redisKeys } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { AccountAdminService, keyRecordToProto } from '@svc/grpc';
import type { AccountAdminServer } from '@svc/grpc';
import { freePort, redisUrl, startGrpcServer } from '@svc/test-kit';
import type { LoopbackGrpcServer } from '@svc/test-kit';
import Redis from 'ioredis';
import pino from 'pino';
import { createGateway } from '../src/app';
import { parseGatewayConfig } from '../src/config';

export const TEST_REDIS_DB = 2;
export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

/** A real grpc-js server implementing AccountAdmin, standing in for account-admin. */
export class FakeAccountAdminGrpc {
  readonly records = new Map<string, KeyRecord>();
  lookups = 0;
  private grpc: LoopbackGrpcServer | undefined;
  port = 0;

  async start(): Promise<void> {
    const impl: AccountAdminServer = {
      lookupKey: (call, callback) => {
        this.lookups++;
        const record = this.records.get(call.request.keyHash);
        callback(null, record === undefined ? { found: false } : { found: true, key: keyRecordToProto(record) });
      },
      createAccount: (_call, callback) => callback({ code: status.UNIMPLEMENTED, details: 'not in this fake' }),
      getAccount: (_call, callback) => callback({ code: status.UNIMPLEMENTED, details: 'not in this fake' }),
      getProviderKeys: (_call, callback) => callback(null, { keys: [] }),
      markKeysUsed: (_call, callback) => callback({ code: status.UNIMPLEMENTED, details: 'not in this fake' }),
      getKeyLimits: (_call, callback) => callback({ code: status.UNIMPLEMENTED, details: 'not in this fake' }),
    };
    this.grpc = await startGrpcServer((server) => server.addService(AccountAdminService, impl));
    this.port = this.grpc.port;
  }

  stop(): Promise<void> {
    return this.grpc?.stop() ?? Promise.resolve();
  }
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A small HTTP server standing in for a control-plane service; records what it receives. */
export class FakeHttpService {
  readonly received: RecordedRequest[] = [];
  respond: (request: RecordedRequest, response: ServerResponse) => void = (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  };
  private server: HttpServer | undefined;
  port = 0;

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
        this.received.push(recorded);
        this.respond(recorded, res);
      });
    });
    this.server = server;
    this.port = await new Promise<number>((resolve) => {
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  }

  last(): RecordedRequest {
    const request = this.received.at(-1);
    if (request === undefined) throw new Error('the fake service received nothing');
    return request;
  }

  stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}

export interface RunningGateway {
  url: string;
  app: NestFastifyApplication;
  close(): Promise<void>;
}

/** The gateway in this process on a free port, with Redis database 2. */
export async function startGateway(env: Record<string, string>): Promise<RunningGateway> {
  const config = parseGatewayConfig({
    INTERNAL_TOKEN, REDIS_URL: redisUrl(TEST_REDIS_DB), LOG_LEVEL: 'silent',
    PROVIDER_KEY_KEK: Buffer.alloc(32, 5).toString('base64'), PROVIDER_KEY_KEK_ID: 'test-kek',
    // The result cache is off unless a test turns it on: repeated searches reach the provider.
    CACHE_ENABLED: 'false', ...env,
  });
  const app = await createGateway(config, pino({ level: 'silent' }));
  const port = await freePort();
  await app.listen(port, '127.0.0.1');
  return { url: `http://127.0.0.1:${port}`, app, close: () => app.close() };
}

/** What a suite reads once `useFakeBackedGateway` has started (inside a hook or a test). */
export interface FakeBackedGateway {
  /** A client of the gateway's Redis (database 2). */
  redis: Redis;
  grpc: FakeAccountAdminGrpc;
  accountAdmin: FakeHttpService;
  /** Billing's stand-in: its own with `{ billing: true }`, else account-admin's. */
  billing: FakeHttpService;
  gateway: RunningGateway;
  /** Writes a key record (`value` as JSON) to Redis; the suite's records are deleted after it. */
  putKeyRecord(hash: string, value: unknown): Promise<void>;
}

/**
 * For the calling `describe`: account-admin's stand-ins (gRPC and HTTP), billing's with
 * `{ billing: true }`, and the gateway in this process pointed at them with `env` on top,
 * started in a beforeAll and stopped, with the key records the suite wrote, in an afterAll.
 */
export function useFakeBackedGateway(env: Record<string, string>, options: { billing?: boolean } = {}): FakeBackedGateway {
  const written: string[] = [];
  // Filled in by the beforeAll, as each part starts.
  const suite = {
    async putKeyRecord(hash: string, value: unknown): Promise<void> {
      written.push(redisKeys.keyRecord(hash));
      await suite.redis.set(redisKeys.keyRecord(hash), JSON.stringify(value));
    },
  } as FakeBackedGateway;
  beforeAll(async () => {
    suite.redis = new Redis(redisUrl(TEST_REDIS_DB));
    suite.grpc = new FakeAccountAdminGrpc();
    await suite.grpc.start();
    suite.accountAdmin = new FakeHttpService();
    await suite.accountAdmin.start();
    suite.billing = suite.accountAdmin;
    if (options.billing === true) {
      suite.billing = new FakeHttpService();
      await suite.billing.start();
    }
    suite.gateway = await startGateway({
      ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${suite.grpc.port}`,
      ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${suite.accountAdmin.port}`,
      BILLING_HTTP_URL: `http://127.0.0.1:${suite.billing.port}`,
      ...env,
    });
  });
  afterAll(async () => {
    const { redis, grpc, accountAdmin, billing, gateway } = suite as Partial<FakeBackedGateway>;
    await gateway?.close();
    if (written.length > 0) await redis?.del(...written);
    await redis?.quit();
    await accountAdmin?.stop();
    if (billing !== accountAdmin) await billing?.stop();
    await grpc?.stop();
  });
  return suite;
}
