import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisKeys } from '@svc/contracts';
import { hashSecret } from '@svc/keys';
import { bearer, call, freePort, newAccount, newApiKey, startStack, waitFor, grantCredits } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';

interface CollectedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

/**
 * A loopback OTLP/HTTP collector that keeps every span it receives in memory (the services
 * export with their real OTLP exporter, JSON encoding).
 */
class MemoryCollector {
  readonly spans: CollectedSpan[] = [];
  private server: Server | null = null;

  async open(port: number): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        let body = Buffer.concat(chunks);
        if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if (request.url === '/v1/traces') this.collect(JSON.parse(body.toString('utf8')) as OtlpTraces);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    this.server = server;
  }

  private collect(body: OtlpTraces): void {
    for (const resource of body.resourceSpans ?? []) {
      const service = resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue ?? '?';
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({ service, name: span.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '' });
        }
      }
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server === null ? resolve() : this.server.close(() => resolve())));
  }
}

interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: { stringValue?: string } }[] };
    scopeSpans?: { spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string }[] }[];
  }[];
}

describe('one trace across the gateway, account-admin, billing and the ledger worker', () => {
  let stack: Stack;
  const collector = new MemoryCollector();

  beforeAll(async () => {
    const port = await freePort();
    await collector.open(port);
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` };
    stack = await startStack({
      name: 'tracing',
      redisDb: 14,
      simulator: true,
      worker: true,
      workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100', ...otel },
      gatewayEnv: otel,
      accountAdminEnv: otel,
      billingEnv: otel,
      logLevel: 'warn',
    });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await collector.close();
  });

  it('carries the caller\'s traceparent through gRPC, the forwarded request and the ledger write', async () => {
    const gateway = stack.gateways[0]?.url ?? '';
    const account = await newAccount(gateway, 'trace');
    await grantCredits(stack, account.accountId, 1_000_000, { reason: 'trace test' });
    const key = await newApiKey(gateway, account.managementKey);
    // Without the key's record in Redis the gateway asks account-admin over gRPC.
    const redis = new Redis(stack.redisUrl);
    await redis.del(redisKeys.keyRecord(hashSecret(key.secret)));
    redis.disconnect();

    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    await waitFor('the grant in Redis', async () => {
      const credits = await call('GET', `${gateway}/v1/credits`, { headers: { ...bearer(key.secret), traceparent } });
      return credits.status === 200 && Number(credits.body.balance_usd) > 0 ? true : undefined;
    });
    const search = await call('POST', `${gateway}/v1/search`, { body: { query: 'traced', model: 'exa/fast' }, headers: { ...bearer(key.secret), traceparent } });
    expect(search.status).toBe(200);

    const spans = await waitFor('spans of every process in the trace', () => {
      const inTrace = collector.spans.filter((s) => s.traceId === traceId);
      const services = new Set(inTrace.map((s) => s.service));
      return ['search-gateway', 'account-admin', 'billing', 'ledger-worker'].every((s) => services.has(s)) ? inTrace : undefined;
    }, { timeoutMs: 20_000 });

    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const gatewaySearch = spans.find((s) => s.service === 'search-gateway' && s.name === 'POST /v1/search');
    const gatewayCredits = spans.filter((s) => s.service === 'search-gateway' && s.name === 'GET /v1/credits');
    expect(gatewaySearch).toBeDefined();
    expect(gatewayCredits.length).toBeGreaterThan(0);
    // The gRPC key lookup is a child of the gateway's request span.
    const lookup = spans.find((s) => s.service === 'account-admin' && s.name === 'grpc LookupKey');
    expect(lookup).toBeDefined();
    expect(byId.get(lookup?.parentSpanId ?? '')?.service).toBe('search-gateway');
    // The forwarded request's span in billing is a child of the gateway's.
    const billing = spans.find((s) => s.service === 'billing' && s.name === 'GET /v1/credits');
    expect(billing).toBeDefined();
    expect(byId.get(billing?.parentSpanId ?? '')?.name).toBe('GET /v1/credits');
    // The ledger worker's write of that search is a child of the search's span.
    const write = spans.find((s) => s.service === 'ledger-worker' && s.name === 'ledger write settlement');
    expect(write?.parentSpanId).toBe(gatewaySearch?.spanId);
  }, 60_000);
});
