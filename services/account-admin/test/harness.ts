import { credentials } from '@grpc/grpc-js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { AccountAdminClient } from '@svc/grpc';
import { INTERNAL_HEADERS } from '@svc/contracts';
import { newId } from '@svc/ids';
import { freePort, inProcessServiceEnv, recreateDatabase, redisUrl } from '@svc/test-kit';
import { createApp } from '../src/app';
import { parseConfig } from '../src/config';
import type { AppConfig } from '../src/config';
import { migrate } from '../src/db/migrate';
import { GrpcServerAdapter } from '../src/grpc/grpc-server.adapter';
import { createLogger } from '../src/logging/logger';

export const INTERNAL_TOKEN = 'test-internal-token-0123456789';
export const REDIS_DB = 1;
/** The provider-key KEK of the in-process tests (a fixed test value, never a real key). */
export const TEST_KEK = Buffer.alloc(32, 7).toString('base64');
export const TEST_KEK_ID = 'test-kek-1';

export interface Harness {
  baseUrl: string;
  config: AppConfig;
  app: NestFastifyApplication;
  redis: Redis;
  pg: Client;
  grpc: AccountAdminClient;
  close(): Promise<void>;
}

/** The service in-process on free ports, on a fresh database and Redis db `redisDb` (1). */
export async function startHarness(suite: string, env: Record<string, string> = {}, redisDb: number = REDIS_DB): Promise<Harness> {
  const databaseUrl = await recreateDatabase(`svc_account_admin_test_${suite}`);
  await migrate(databaseUrl);
  const redis = new Redis(redisUrl(redisDb));
  await redis.flushdb();
  const config = parseConfig({
    ...await inProcessServiceEnv(['PORT', 'GRPC_PORT'], { databaseUrl, redisDb, internalToken: INTERNAL_TOKEN }),
    COOKIE_SECURE: 'false',
    // Accounts at once, as the suites expect; the mail suites set `required` with a catcher's SMTP settings.
    SIGNUP_CONFIRMATION: 'off',
    // Nothing listens there: the in-process service never reaches a billing by accident.
    BILLING_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
    PROVIDER_KEY_KEK: TEST_KEK,
    PROVIDER_KEY_KEK_ID: TEST_KEK_ID,
    ...env,
  });
  const app = await createApp(config, createLogger(config.LOG_LEVEL));
  await app.listen(config.PORT, config.HOST);
  const grpcPort = app.get(GrpcServerAdapter).port;
  const grpc = new AccountAdminClient(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  return {
    baseUrl: `http://127.0.0.1:${config.PORT}`,
    config,
    app,
    redis,
    pg,
    grpc,
    async close() {
      grpc.close();
      await app.close();
      await pg.end();
      await redis.quit();
    },
  };
}

/** An account with a management key, inserted as the dashboard would (rows only). */
export interface Identity {
  accountId: string;
  keyId: string;
  kind: 'api' | 'management';
}

export async function insertAccount(pg: Client): Promise<string> {
  const id = newId('account');
  await pg.query('INSERT INTO accounts (id) VALUES ($1)', [id]);
  return id;
}

/** The headers the gateway sets on a forwarded, authenticated request. */
export function gatewayHeaders(identity: Identity, token = INTERNAL_TOKEN): Record<string, string> {
  return {
    [INTERNAL_HEADERS.token]: token,
    [INTERNAL_HEADERS.accountId]: identity.accountId,
    [INTERNAL_HEADERS.keyId]: identity.keyId,
    [INTERNAL_HEADERS.keyKind]: identity.kind,
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; json?: unknown; rawBody?: string } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  } else if (options.rawBody !== undefined) {
    body = options.rawBody;
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  if (text !== '' && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text) as Record<string, unknown>;
  return { status: response.status, headers: response.headers, body: parsed, text };
}

export function errorOf(response: JsonResponse): { code: string; message: string; request_id: string } {
  return response.body.error as { code: string; message: string; request_id: string };
}
