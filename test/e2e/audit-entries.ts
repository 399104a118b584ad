import type { JsonResponse } from '@svc/test-kit';
import { useStripeStack } from './stripe-stack';

/** An audit entry as a test expects it (GET /v1/audit-log's fields but its id and time). */
export interface ExpectedEntry {
  action: string;
  actor: { kind: string; id: string };
  client_address: string | null;
  target_id: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

/** An answered entry in the shape of ExpectedEntry. */
export const entryShape = (entry: JsonResponse['body']): ExpectedEntry => ({
  action: entry.action, actor: entry.actor, client_address: entry.client_address, target_id: entry.target_id, changes: entry.changes,
});

/**
 * The stack the audit-log suites run on: a fake Stripe, billing talking to it, both Postgres
 * databases open, and a gateway that trusts 127.0.0.1 as a proxy (so each request's
 * X-Forwarded-For names its client).
 */
export function useAuditStack(name: string, stripe: { secretKey: string; webhookSecret: string }): ReturnType<typeof useStripeStack> {
  return useStripeStack(stripe, (fake) => ({
    name,
    redisDb: 10,
    logLevel: 'warn',
    gatewayEnv: { TRUSTED_PROXIES: '127.0.0.1/32, ::1/128' },
    billingEnv: fake.billingEnv(2000),
  }), { db: true, accountsDb: true, timeoutMs: 180_000 });
}
