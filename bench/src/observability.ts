/**
 * What metrics, logs and traces add to a search on the gateway's hot path, in nanoseconds of
 * CPU per search, measured in one process (alternating rounds, median): the edge's HTTP
 * metrics observation, the search's metrics and log fields (made after the reply), the access
 * line with and without the search's fields, and tracing off (the default) and on (a span
 * per request, the traceparent read into the settlement record; spans kept in memory, not
 * exported). Compare with the gateway's CPU per search in bench/results/search-cpu.json.
 * Prints Markdown and writes bench/results/observability.json.
 *
 * Env: ROUNDS (7), PER_ROUND (50000).
 */
import pino from 'pino';
import { CATALOG } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { createServiceLogger } from '@svc/logging';
import { Counter, createRegistry, Histogram, HttpMetrics, LATENCY_BUCKETS_S } from '@svc/metrics';
import { SearchMetrics } from '@svc/search-gateway';
import type { AttemptResult, SearchReply } from '@svc/search-gateway';
import { currentTraceparent, InMemorySpanExporter, requestTracing, startTracing } from '@svc/tracing';
import { median, writeResult } from './lib-results';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const PER_ROUND = Number(process.env.PER_ROUND ?? 50_000);

const model = CATALOG.find((m) => m.id === 'exa/fast');
if (model === undefined) throw new Error('exa/fast missing from the catalog');
const record: KeyRecord = { id: 'key_bench', accountId: 'acc_bench', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false };
const attempts: AttemptResult[] = [{ status: 'success', model, source: 'platform', results: [], reservedMicros: 9_000, chargedMicros: 9_000 }];
const reply: SearchReply = { kind: 'reply', status: 200, body: '{}', requestId: 'req_bench', rateLimit: undefined, attempts };

// Lines go to /dev/null synchronously (the cost of building and writing a line, not of a terminal).
const log = createServiceLogger({ service: 'search-gateway', level: 'info', destination: pino.destination({ dest: '/dev/null', sync: true }) });
// The gateway's logger before the shared one (wildcard redaction paths), for comparison.
const before = pino({ level: 'info', base: { service: 'search-gateway' }, redact: { paths: ['authorization', '*.authorization', '*.headers.authorization', '*.headers.cookie', '*.headers["x-svc-internal-token"]'], censor: '[redacted]' } }, pino.destination({ dest: '/dev/null', sync: true }));
const registry = createRegistry('bench');
const http = new HttpMetrics(registry);
const search = new SearchMetrics(registry);
// prom-client's own classes with kept label children, as the gateway used them before the
// hot metrics (decision 19): the reference for the HTTP pair and for one provider timing.
const promRequests = new Counter({ name: 'ref_requests_total', help: 'reference', labelNames: ['method', 'route', 'status'], registers: [registry] }).labels('POST', '/v1/search', '200');
const promDuration = new Histogram({ name: 'ref_duration_seconds', help: 'reference', labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS_S, registers: [registry] }).labels('POST', '/v1/search', '200');
const promProvider = new Histogram({ name: 'ref_provider_seconds', help: 'reference', labelNames: ['provider', 'outcome'], buckets: LATENCY_BUCKETS_S, registers: [registry] });
const providerOk: Parameters<SearchMetrics['providerCall']>[1] = { ok: true, results: [] };

interface FakeRequest {
  id: string;
  method: string;
  headers: Record<string, string>;
  routeOptions: { url: string };
}
const request = (): FakeRequest => ({ id: 'req_bench', method: 'POST', headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, routeOptions: { url: '/v1/search' } });

const cases: Record<string, () => void> = {
  'http metrics (observe)': () => http.observe('POST', '/v1/search', 200, 1.5),
  'http metrics, prom-client reference (counter and histogram children)': () => {
    promRequests.inc();
    promDuration.observe(0.0015);
  },
  'provider timing (SearchMetrics.providerCall)': () => search.providerCall('exa', providerOk, 2.5),
  'provider timing, prom-client reference (histogram)': () => promProvider.labels('exa', 'ok').observe(0.0025),
  'search metrics and log fields': () => {
    const r = request();
    search.replied(r, record, reply);
    search.answered(r, 200, 1.5);
  },
  'access line, previous gateway logger': () => before.info({ request_id: 'req_bench', method: 'POST', route: '/v1/search', status: 200, duration_ms: 1.5 }, 'request'),
  'access line (plain)': () => log.info({ request_id: 'req_bench', method: 'POST', route: '/v1/search', status: 200, duration_ms: 1.5 }, 'request'),
  'access line with search fields': () => log.info({ request_id: 'req_bench', method: 'POST', route: '/v1/search', status: 200, duration_ms: 1.5, account_id: 'acc_bench', key_id: 'key_bench', model: 'exa/fast', models: ['exa/fast'], outcome: 'ok', cost_usd: 0.005 }, 'request'),
  'tracing off (traceparent read)': () => {
    currentTraceparent();
  },
};

function measure(fn: () => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) fn();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / PER_ROUND;
}

const results: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(cases)) (results[name] ??= []).push(measure(fn));
}
// Tracing on last (it installs a global context manager that cannot be taken back).
const exporter = new InMemorySpanExporter();
startTracing('bench', {}, exporter);
const tracing = requestTracing();
if (tracing === undefined) throw new Error('tracing did not start');
const traced = (): void => {
  const r = request();
  tracing.enter(r, () => {
    currentTraceparent();
  });
  tracing.end(r, 200);
};
for (let round = 0; round < ROUNDS; round++) {
  (results['tracing on (span per request, traceparent read)'] ??= []).push(measure(traced));
  exporter.reset();
}

const medians = Object.fromEntries(Object.entries(results).map(([name, values]) => [name, Math.round(median(values))]));
// Per search, against the previous build: its access line, against ours with the search's fields plus the metrics.
const searchPath = (medians['http metrics (observe)'] ?? 0) + (medians['search metrics and log fields'] ?? 0)
  + (medians['access line with search fields'] ?? 0) - (medians['access line, previous gateway logger'] ?? 0) + (medians['tracing off (traceparent read)'] ?? 0);
console.log('| what | ns of CPU per search (median) |\n|---|---|');
for (const [name, ns] of Object.entries(medians)) console.log(`| ${name} | ${ns} |`);
console.log(`| **per search against the previous gateway, tracing off** (metrics + the richer access line - the old one) | **${searchPath}** |`);
console.log(`\n${writeResult('observability', { command: 'npm run bench -- observability', rounds: ROUNDS, per_round: PER_ROUND, median_ns: medians, added_per_search_tracing_off_ns: searchPath })}`);
