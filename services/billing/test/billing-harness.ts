import { status } from '@grpc/grpc-js';
import { newId } from '@svc/ids';
import { AccountAdminService } from '@svc/grpc';
import type { AccountAdminServer, ProtoAccount, ProtoKeyLimit } from '@svc/grpc';
import { inProcessServiceEnv, startGrpcServer } from '@svc/test-kit';
import type { LoopbackGrpcServer } from '@svc/test-kit';
import { Client } from 'pg';
import { startBilling, createLogger } from '../src/app/app';
import { parseBillingConfig } from '../src/config';
import type { RunningBilling } from '../src/app/app';
import { migratedBillingDatabase } from './ledger-fixtures';

export const INTERNAL_TOKEN = 'internal-token-for-billing-tests';
export const OPERATOR_TOKEN = 'operator-token-for-billing-tests';

/** A real grpc-js server implementing AccountAdmin, standing in for account-admin. */
export class FakeAccountAdmin {
  readonly accounts = new Map<string, ProtoAccount>();
  /** Every MarkKeysUsed use received, in order. */
  readonly used: { keyId: string; usedAtMs: number }[] = [];
  /** Key limits GetKeyLimits answers (key.limit.threshold), by key id. */
  readonly limits = new Map<string, ProtoKeyLimit>();
  readonly address: string;
  private constructor(private readonly grpc: LoopbackGrpcServer) {
    this.address = grpc.address;
  }

  static async start(): Promise<FakeAccountAdmin> {
    const grpc = await startGrpcServer();
    const fake = new FakeAccountAdmin(grpc);
    const implementation: AccountAdminServer = {
      lookupKey: (_call, callback) => callback(null, { found: false }),
      createAccount: (call, callback) => {
        const account: ProtoAccount = { accountId: newId('account'), email: call.request.email, name: call.request.name, createdAtMs: Date.now() };
        fake.accounts.set(account.accountId, account);
        callback(null, account);
      },
      getAccount: (call, callback) => {
        const account = fake.accounts.get(call.request.accountId);
        if (account === undefined) callback({ code: status.NOT_FOUND, details: 'no such account' }, null);
        else callback(null, account);
      },
      getProviderKeys: (_call, callback) => callback(null, { keys: [] }),
      markKeysUsed: (call, callback) => {
        for (const use of call.request.uses) fake.used.push({ keyId: use.keyId, usedAtMs: use.usedAtMs });
        callback(null, { updated: call.request.uses.length });
      },
      getKeyLimits: (call, callback) => callback(null, { limits: call.request.keyIds.flatMap((id) => fake.limits.get(id) ?? []) }),
    };
    grpc.server.addService(AccountAdminService, implementation);
    return fake;
  }

  /** An account that exists in account-admin only (as made by dashboard signup). */
  addAccount(): string {
    const accountId = newId('account');
    this.accounts.set(accountId, { accountId, createdAtMs: Date.now() });
    return accountId;
  }

  stop(): Promise<void> {
    return this.grpc.stop();
  }
}

export interface Harness {
  billing: RunningBilling;
  accountAdmin: FakeAccountAdmin;
  databaseUrl: string;
  db: Client;
  close(): Promise<void>;
}

/** Fresh database `svc_billing_test_<suite>`, migrated; billing in-process on free ports. */
export async function startHarness(suite: string): Promise<Harness> {
  const databaseUrl = await migratedBillingDatabase(`svc_billing_test_${suite}`);
  const accountAdmin = await FakeAccountAdmin.start();
  const config = parseBillingConfig({
    ...await inProcessServiceEnv(['PORT', 'OPERATOR_PORT'], { databaseUrl, redisDb: 3, internalToken: INTERNAL_TOKEN }),
    OPERATOR_TOKEN,
    ACCOUNT_ADMIN_GRPC_URL: accountAdmin.address,
  });
  const billing = await startBilling(config, createLogger(config.LOG_LEVEL));
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  return {
    billing,
    accountAdmin,
    databaseUrl,
    db,
    async close() {
      await billing.close();
      await accountAdmin.stop();
      await db.end();
    },
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export async function call(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

export function operatorHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json', ...extra };
}

/** The error object of an error body (fails the test if there is none). */
/** The answer is 400 invalid_request, its message containing `message` when given. */
export function expectInvalidRequest(response: JsonResponse, message?: string): void {
  expect(response.status).toBe(400);
  expect(errorOf(response).code).toBe('invalid_request');
  if (message !== undefined) expect(errorOf(response).message).toContain(message);
}

export function errorOf(response: JsonResponse): { code: string; message: string; request_id: string } {
  const error = response.body.error as { code: string; message: string; request_id: string } | undefined;
  if (error === undefined) throw new Error(`expected an error body, got ${response.status} ${JSON.stringify(response.body)}`);
  return error;
}
