import { parseArgs } from 'node:util';
import { SearchGateway } from '../client.js';
import type { FetchLike } from '../client.js';
import { ResearchWaitTimeoutError, SearchGatewayConnectionError, SearchGatewayError } from '../errors.js';
import { FILTER_NAMES, PROVIDERS } from '../types.js';
import type { ApiKey, AuditEntry, AuditLogQuery, CacheMode, CreateKeyRequest, ExtractFormat, FanoutSearchResponse, FilterName, LimitReset, Provider, ResearchRequest, ResearchRun, ResearchRunSummary, ResearchStatus, SearchContents, SearchRequest, SearchResponse, UpdateKeyRequest, UsageGroupBy } from '../types.js';
import { VERSION } from '../version.js';
import { EXIT, UsageError, exitCodeFor } from './exit-codes.js';
import { keyValues, table } from './format.js';
import { RESEARCH_WAIT_DEFAULTS } from '../client.js';

/** What the command line reads and writes; the bin passes the process's own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** The whole standard input, or undefined when it is a terminal. */
  readStdin?: () => Promise<string | undefined>;
  /** For tests: the client's fetch, retry wait and clock. */
  fetch?: FetchLike;
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  now?: () => number;
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean; value?: string; help: string };

interface Command {
  /** `keys create` */
  name: string;
  summary: string;
  /** After `svc <name>`. */
  args: string;
  /** Extra lines of help. */
  notes?: string[];
  options: Record<string, OptionSpec>;
  /** Positional arguments: at least, at most. */
  positionals: [number, number];
  run: (ctx: Context) => Promise<void>;
}

interface Context {
  client: SearchGateway;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
  json: boolean;
  io: CliIo;
  out: (text: string) => void;
  print: (body: unknown, human: () => string) => void;
}

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', help: 'print the API\'s JSON instead of a table' },
  'base-url': { type: 'string', value: 'url', help: 'the API\'s base URL (default $SVC_BASE_URL, else http://localhost:8080)' },
  timeout: { type: 'string', value: 'ms', help: 'per-attempt timeout in milliseconds (default 120000)' },
  'max-retries': { type: 'string', value: 'n', help: 'retries of 429, 500, 503, 504 and other 5xx but 502 (default 2)' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

const KEY_FIELDS: Record<string, OptionSpec> = {
  name: { type: 'string', value: 'text', help: 'a name, 1..100 characters' },
  'limit-usd': { type: 'string', value: 'usd', help: 'credit limit in USD (a number above 0), or "none"' },
  'limit-reset': { type: 'string', value: 'period', help: 'daily, weekly or monthly: when the limit starts again, or "none"' },
  'expires-at': { type: 'string', value: 'time', help: 'RFC 3339 time after which the key stops working, or "none"' },
  'allow-model': { type: 'string', multiple: true, value: 'model', help: 'a model id or <provider>/* the key may search; repeat for more (up to 64), or "none" for every model' },
  'allow-ip': { type: 'string', multiple: true, value: 'cidr', help: 'an IPv4/IPv6 CIDR the key may be used from; repeat for more (up to 32), or "none" for any address' },
};

const CACHE_MODES: readonly CacheMode[] = ['default', 'refresh', 'off'];
const SEARCH_CONTENTS: readonly SearchContents[] = ['none', 'text', 'highlights'];
const EXTRACT_FORMATS: readonly ExtractFormat[] = ['text', 'markdown'];

/** The cache flags of search and extract, as request fields (the API checks the values it takes). */
function cacheFields(values: Context['values']): { cache?: CacheMode; cache_max_age_s?: number } {
  const cache = text(values.cache);
  if (cache !== undefined && !CACHE_MODES.includes(cache as CacheMode)) throw new UsageError('--cache must be default, refresh or off');
  const maxAge = optionalInteger(values['cache-max-age'], '--cache-max-age');
  return { ...(cache === undefined ? {} : { cache: cache as CacheMode }), ...(maxAge === undefined ? {} : { cache_max_age_s: maxAge }) };
}

/** The search filters as flags: one per filter field of SearchRequest (`--include-domains`, ...), the domain lists repeatable. */
const FILTER_FLAG_HELP: Readonly<Record<FilterName, { value: string; help: string }>> = {
  include_domains: { value: 'host', help: 'only results from this hostname or its subdomains; repeat for more (up to 20)' },
  exclude_domains: { value: 'host', help: 'no results from this hostname or its subdomains; repeat for more (up to 20)' },
  country: { value: 'CC', help: 'ISO 3166-1 alpha-2 country code, e.g. US' },
  language: { value: 'll', help: 'ISO 639-1 language code, e.g. en' },
  published_after: { value: 'date', help: 'RFC 3339 date or date-time: published at or after' },
  published_before: { value: 'date', help: 'RFC 3339 date or date-time: published at or before' },
  safesearch: { value: 'level', help: 'off, moderate or strict' },
};

export const FILTER_FLAGS: Readonly<Record<string, OptionSpec>> = Object.fromEntries(FILTER_NAMES.map((name) => [
  name.replace(/_/g, '-'),
  { type: 'string', multiple: name === 'include_domains' || name === 'exclude_domains', ...FILTER_FLAG_HELP[name] } satisfies OptionSpec,
]));

/** The filter flags given, as SearchRequest fields (the API checks the values). */
function filterFields(values: Context['values']): Partial<SearchRequest> {
  const fields: Record<string, string | string[]> = {};
  for (const name of FILTER_NAMES) {
    const value = values[name.replace(/_/g, '-')];
    if (Array.isArray(value) || typeof value === 'string') fields[name] = value;
  }
  return fields;
}

/** `svc research <input...>` is a command; `svc research get|wait|list|cancel` are its subcommands. */
const RESEARCH_SUBCOMMANDS = ['get', 'wait', 'list', 'cancel'];
/** The research models `svc research` asks for without -m. */
const DEFAULT_RESEARCH_MODELS = ['exa/agent-high', 'exa/agent-medium', 'exa/agent-low', 'exa/agent-minimal'] as const;

const COMMANDS: Command[] = [
  {
    name: 'search',
    summary: 'search the web with one model or several in fallback order, or several at once (--fanout)',
    args: '<query...> -m <model> [-m <model>...] [--fanout [--fanout-wait-ms <ms>]] [--max-cost <usd>] [--max <n>] [--contents none|text|highlights] [--max-chars <n>] [--max-total-chars <n>] [--cache default|refresh|off] [--cache-max-age <s>] [filters]',
    notes: [
      'The first model that answers wins; a failed model falls back to the next.',
      'With --fanout, 2 to 5 models are asked at once and their results merged (each URL once, with the models that returned it); each model is charged for what it returned.',
      '--max-cost caps what the search may cost: a model that would take it past the cap is skipped.',
      'A model that cannot honour every filter given, or return the contents asked, is skipped (see svc models, FILTERS and CONTENTS).',
      'Needs an API key in SVC_API_KEY.',
      'Example: svc search "rust async runtimes" -m exa/fast -m brave/web --max 5',
      'Example: svc search "rust async runtimes" -m exa/fast -m brave/web -m tavily/basic --fanout --max-cost 0.03',
    ],
    options: {
      model: { type: 'string', short: 'm', multiple: true, value: 'model', help: 'a model id (see svc models); repeat for fallbacks' },
      max: { type: 'string', value: 'n', help: 'most results, 1..100 (default 10)' },
      'idempotency-key': { type: 'string', value: 'key', help: 'Idempotency-Key of the search (default: a random one)' },
      cache: { type: 'string', value: 'mode', help: 'the result cache: default (answer a repeat from the cache), refresh (ask the provider, store), off' },
      'cache-max-age': { type: 'string', value: 's', help: 'accept a cached answer at most this many seconds old' },
      contents: { type: 'string', value: 'what', help: 'what each result carries besides its snippet: none (default), text or highlights' },
      'max-chars': { type: 'string', value: 'n', help: 'with --contents: the most characters of text per result, 100..20000 (default 5000)' },
      'max-total-chars': { type: 'string', value: 'n', help: 'the most characters of text in the whole answer (the last results cut or dropped)' },
      fanout: { type: 'boolean', help: 'ask every model at once and merge their results (strategy fanout; 2 to 5 models)' },
      'fanout-wait-ms': { type: 'string', value: 'ms', help: 'with --fanout: how long to wait for the models (a model still running then is cancelled)' },
      'max-cost': { type: 'string', value: 'usd', help: 'the most the search may cost, in USD' },
      ...FILTER_FLAGS,
    },
    positionals: [1, Infinity],
    run: async (ctx) => {
      const models = list(ctx.values.model);
      if (models.length === 0) throw new UsageError('give at least one model with -m <model> (see svc models)');
      const query = ctx.positionals.join(' ');
      const max = optionalInteger(ctx.values.max, '--max');
      const contents = text(ctx.values.contents);
      if (contents !== undefined && !SEARCH_CONTENTS.includes(contents as SearchContents)) throw new UsageError('--contents must be none, text or highlights');
      const maxChars = optionalInteger(ctx.values['max-chars'], '--max-chars');
      const maxTotal = optionalInteger(ctx.values['max-total-chars'], '--max-total-chars');
      const fanout = ctx.values.fanout === true;
      const wait = optionalInteger(ctx.values['fanout-wait-ms'], '--fanout-wait-ms');
      if (wait !== undefined && !fanout) throw new UsageError('--fanout-wait-ms needs --fanout');
      const [first, ...rest] = models;
      const body: SearchRequest = {
        query, ...(rest.length === 0 ? { model: first } : { models }), ...(max === undefined ? {} : { max_results: max }),
        ...cacheFields(ctx.values), ...filterFields(ctx.values),
        ...(contents === undefined ? {} : { contents: contents as SearchContents }), ...(maxChars === undefined ? {} : { max_chars_per_result: maxChars }),
        ...(maxTotal === undefined ? {} : { max_total_chars: maxTotal }),
        ...(fanout ? { strategy: 'fanout' } : {}), ...(wait === undefined ? {} : { fanout_wait_ms: wait }), ...maxCostField(ctx.values),
      };
      const idempotencyKey = text(ctx.values['idempotency-key']);
      const answer = await ctx.client.search(body, idempotencyKey === undefined ? {} : { idempotencyKey });
      if ('strategy' in answer) {
        ctx.print(answer, () => fanoutText(answer));
        return;
      }
      const result: SearchResponse = answer;
      ctx.print(result, () => {
        const head = `${result.model} (${result.source}) answered with ${result.results.length} result${result.results.length === 1 ? '' : 's'}: ` +
          `cost ${result.cost_usd} USD, ${result.latency_ms} ms, cache ${result.cache.status}${result.cache.status === 'hit' || result.cache.status === 'joined' ? ` (${result.cache.age_s} s old)` : ''}, request ${result.request_id}\n`;
        const attempts = result.attempts.map((a) => `  before it: ${a.model} ${a.status}: ${a.error}${a.cost_usd === undefined ? '' : ` (kept ${a.cost_usd} USD)`}\n`).join('');
        const pages = result.results.filter((r) => r.text !== undefined || r.highlights !== undefined)
          .map((r) => `\n${r.position}. ${r.title}\n${r.text ?? (r.highlights ?? []).join('\n')}\n`).join('');
        return head + attempts + '\n' + table(['#', 'TITLE', 'URL'], result.results.map((r) => [r.position, r.title, r.url])) + pages;
      });
    },
  },
  {
    name: 'extract',
    summary: 'read the text of web pages, with fallback per URL over the extract models',
    args: '<url...> -m <model> [-m <model>...] [--format text|markdown] [--max-chars <n>] [--query <text>] [--max-age <s>] [--max-total-chars <n>] [--max-cost <usd>] [--cache default|refresh|off] [--cache-max-age <s>]',
    notes: [
      'A URL the first model cannot fetch is tried at the next; only the URLs that come back are charged.',
      'A model that cannot honour the format, --query or --max-age is skipped (see svc models, FORMATS and OPTIONS).',
      'Needs an API key in SVC_API_KEY.',
      'Example: svc extract https://example.com/article -m exa/contents -m tavily/extract --max-chars 5000',
    ],
    options: {
      model: { type: 'string', short: 'm', multiple: true, value: 'model', help: 'an extract model id (see svc models); repeat for fallbacks' },
      format: { type: 'string', value: 'format', help: 'text (default) or markdown' },
      'max-chars': { type: 'string', value: 'n', help: 'the most characters of text per page, 100..100000 (default 20000)' },
      query: { type: 'string', value: 'text', help: 'rank or trim each page\'s text by relevance to it' },
      'max-age': { type: 'string', value: 's', help: 'accept provider-cached content at most this many seconds old (0: fetch live)' },
      'max-total-chars': { type: 'string', value: 'n', help: 'the most characters of text in the whole answer (the last pages cut or dropped)' },
      'idempotency-key': { type: 'string', value: 'key', help: 'Idempotency-Key of the extract (default: a random one)' },
      cache: { type: 'string', value: 'mode', help: 'the result cache: default (a page read before, at the cache price), refresh (fetch, store), off' },
      'cache-max-age': { type: 'string', value: 's', help: 'accept a cached page at most this many seconds old' },
      'max-cost': { type: 'string', value: 'usd', help: 'the most the extract may cost, in USD' },
    },
    positionals: [1, 20],
    run: async (ctx) => {
      const models = list(ctx.values.model);
      if (models.length === 0) throw new UsageError('give at least one extract model with -m <model> (see svc models)');
      const format = text(ctx.values.format);
      if (format !== undefined && !EXTRACT_FORMATS.includes(format as ExtractFormat)) throw new UsageError('--format must be text or markdown');
      const maxChars = optionalInteger(ctx.values['max-chars'], '--max-chars');
      const maxAge = optionalInteger(ctx.values['max-age'], '--max-age');
      const maxTotal = optionalInteger(ctx.values['max-total-chars'], '--max-total-chars');
      const query = text(ctx.values.query);
      const [first, ...rest] = models;
      const body = {
        urls: ctx.positionals, ...(rest.length === 0 ? { model: first } : { models }), ...cacheFields(ctx.values),
        ...(format === undefined ? {} : { format: format as ExtractFormat }), ...(maxChars === undefined ? {} : { max_chars_per_url: maxChars }),
        ...(query === undefined ? {} : { query }), ...(maxAge === undefined ? {} : { max_age_s: maxAge }), ...(maxTotal === undefined ? {} : { max_total_chars: maxTotal }),
        ...maxCostField(ctx.values),
      };
      const idempotencyKey = text(ctx.values['idempotency-key']);
      const result = await ctx.client.extract(body, idempotencyKey === undefined ? {} : { idempotencyKey });
      ctx.print(result, () => {
        const head = `${result.results.length} of ${result.results.length + result.failed.length} page${result.results.length + result.failed.length === 1 ? '' : 's'} read: ` +
          `cost ${result.cost_usd} USD, ${result.latency_ms} ms, cache ${result.cache.status}${result.truncated ? ', text cut' : ''}, request ${result.request_id}\n`;
        const attempts = result.attempts.map((a) => `  ${a.model} ${a.status}: ${a.succeeded} of ${a.urls} URLs, ${a.cost_usd} USD${a.error === undefined ? '' : ` (${a.error})`}\n`).join('');
        const failed = result.failed.length === 0 ? '' : `\n${table(['FAILED', 'ERROR'], result.failed.map((f) => [f.url, f.error]))}`;
        const pages = result.results.map((r) => `\n== ${r.title ?? r.url} (${r.url}, ${r.model}${r.truncated ? ', cut' : ''})\n${r.text}\n`).join('');
        return head + attempts + failed + pages;
      });
    },
  },
  {
    name: 'models',
    summary: 'list the models and their prices (no key needed)',
    args: '',
    options: {},
    positionals: [0, 0],
    run: async (ctx) => {
      const models = await ctx.client.models();
      const searches = models.data.filter((m) => m.kind !== 'extract' && m.kind !== 'research');
      const extracts = models.data.filter((m) => m.kind === 'extract');
      const research = models.data.filter((m) => m.kind === 'research');
      ctx.print(models, () => table(
        ['ID', 'PROVIDER', 'MAX_RESULTS', 'BASE_USD', 'INCLUDED', 'PER_RESULT_USD', 'CACHE_USD', 'AVAILABLE', 'FILTERS', 'CONTENTS'],
        searches.map((m) => [m.id, m.provider, m.max_results, m.pricing.base_usd, m.pricing.included_results, m.pricing.per_result_usd, m.pricing.cache_price_usd, m.available ? 'yes' : 'no', (m.supported_filters ?? []).join(','), (m.supported_contents ?? []).join(',')]),
      ) + (extracts.length === 0 ? '' : `\nExtract models (svc extract):\n${table(
        ['ID', 'PROVIDER', 'MAX_URLS', 'PER_URL_USD', 'URL_BLOCK', 'CACHE_USD', 'AVAILABLE', 'FORMATS', 'OPTIONS'],
        extracts.map((m) => [m.id, m.provider, m.max_results, m.pricing.per_url_usd, m.pricing.url_block, m.pricing.cache_price_usd, m.available ? 'yes' : 'no', (m.supported_formats ?? []).join(','), (m.supported_options ?? []).join(',')]),
      )}`) + (research.length === 0 ? '' : `\nResearch models (svc research):\n${table(
        ['ID', 'PROVIDER', 'METERING', 'UNIT_USD', 'MAX_COST_USD', 'MIN_CAP_USD', 'AVAILABLE'],
        research.map((m) => [m.id, m.provider, m.pricing.metering, m.pricing.unit_usd, m.pricing.max_cost_usd, m.pricing.min_cap_usd, m.available ? 'yes' : 'no']),
      )}`));
    },
  },
  {
    name: 'pricing',
    summary: 'show prices, the purchase range and the BYOK fee (no key needed)',
    args: '',
    options: {},
    positionals: [0, 0],
    run: async (ctx) => {
      const pricing = await ctx.client.pricing();
      ctx.print(pricing, () =>
        table(['MODEL', 'BASE_USD', 'INCLUDED', 'PER_RESULT_USD', 'PER_URL_USD', 'MAX_COST_USD', 'KIND'], pricing.models.map((m) => [m.id, m.base_usd, m.included_results, m.per_result_usd, m.per_url_usd, m.max_cost_usd, m.kind])) +
        `\nCredits can be bought from ${pricing.purchase.min_usd} to ${pricing.purchase.max_usd} ${pricing.currency}.\n` +
        `Own provider keys (BYOK): ${pricing.byok.enabled ? `enabled, fee ${pricing.byok.fee_percent}% of the model's price` : 'not available'}.\n`);
    },
  },
  {
    name: 'research',
    summary: 'start a research run with a hard cap (and wait for its answer)',
    args: '<input...> --max-cost <usd> [-m <model>]... [--output-schema <json>] [--metadata <k=v>]... [--wait [--wait-max <s>]]',
    notes: [
      'Reserves the cap at once; the run is charged its metered cost, never above --max-cost, and the rest is released.',
      `Without -m: ${DEFAULT_RESEARCH_MODELS.join(', ')} in that order (the highest Exa effort the cap holds; those that do not fit are skipped).`,
      'svc research get|list|wait|cancel read and end runs. Needs an API key in SVC_API_KEY (get, list, wait, cancel: either key).',
      'With --wait it exits 0 when the run completed, 1 when it failed, was cancelled or did not end within --wait-max.',
      'Example: svc research "how do EU and US rules on AI model training data differ?" --max-cost 0.50 --wait',
    ],
    options: {
      model: { type: 'string', short: 'm', multiple: true, value: 'model', help: 'a research model (svc models, kind research); repeat for fallbacks, up to 5' },
      'max-cost': { type: 'string', value: 'usd', help: 'the hard cap in USD (required)' },
      'output-schema': { type: 'string', value: 'json', help: 'a JSON Schema (as JSON text) for structured output' },
      metadata: { type: 'string', multiple: true, value: 'k=v', help: 'a label returned with the run; repeat for more (up to 16)' },
      wait: { type: 'boolean', help: 'wait for the run to end and print its answer' },
      'wait-max': { type: 'string', value: 's', help: `with --wait: give up waiting after this many seconds (default ${RESEARCH_WAIT_DEFAULTS.maxWaitMs / 1000}, at most ${RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs / 1000}); the run goes on` },
      'idempotency-key': { type: 'string', value: 'key', help: 'Idempotency-Key of the creation (default: a random one)' },
    },
    positionals: [1, Infinity],
    run: async (ctx) => {
      const maxCost = text(ctx.values['max-cost']);
      if (maxCost === undefined) throw new UsageError('give the cap with --max-cost <usd>');
      const models = list(ctx.values.model);
      const chosen = models.length === 0 ? [...DEFAULT_RESEARCH_MODELS] : models;
      const [first, ...rest] = chosen;
      const body: ResearchRequest = {
        input: ctx.positionals.join(' '), ...(rest.length === 0 ? { model: first } : { models: chosen }), max_cost_usd: number(maxCost, '--max-cost'),
      };
      const schema = text(ctx.values['output-schema']);
      if (schema !== undefined) body.output_schema = jsonObject(schema, '--output-schema');
      const metadata = list(ctx.values.metadata);
      if (metadata.length > 0) body.metadata = labels(metadata);
      const maxWaitMs = waitMs(ctx.values['wait-max']);
      const idempotencyKey = text(ctx.values['idempotency-key']);
      const created = await ctx.client.research.create(body, idempotencyKey === undefined ? {} : { idempotencyKey });
      if (ctx.values.wait !== true) {
        ctx.print(created, () => `${created.id} ${created.status}: holds ${created.held_usd} USD of a ${created.max_cost_usd} USD cap; next ${created.model ?? '-'}
` +
          `svc research wait ${created.id} prints its answer when it ends.
`);
        return;
      }
      await waitAndPrint(ctx, created.id, maxWaitMs);
    },
  },
  {
    name: 'research get',
    summary: 'show one research run (its answer once completed)',
    args: '<id>',
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const run = await ctx.client.research.get(arg(ctx, 0));
      ctx.print(run, () => researchRunText(run));
    },
  },
  {
    name: 'research wait',
    summary: 'wait for a research run to end and print its answer',
    args: '<id> [--wait-max <s>]',
    notes: ['Exits 0 when the run completed, 1 when it failed, was cancelled or did not end within --wait-max.'],
    options: { 'wait-max': { type: 'string', value: 's', help: `give up waiting after this many seconds (default ${RESEARCH_WAIT_DEFAULTS.maxWaitMs / 1000}, at most ${RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs / 1000})` } },
    positionals: [1, 1],
    run: async (ctx) => {
      await waitAndPrint(ctx, arg(ctx, 0), waitMs(ctx.values['wait-max']));
    },
  },
  {
    name: 'research list',
    summary: 'list the account\'s research runs, newest first',
    args: '[--status <status>] [--max <n>]',
    notes: ['--json prints one JSON array of the runs.'],
    options: {
      status: { type: 'string', value: 'status', help: 'only runs in this status: queued, running, completed, failed or cancelled' },
      max: { type: 'string', value: 'n', help: 'at most this many runs (default 100)' },
    },
    positionals: [0, 0],
    run: async (ctx) => {
      const max = optionalInteger(ctx.values.max, '--max') ?? 100;
      if (max < 1) throw new UsageError('--max must be at least 1');
      const status = text(ctx.values.status) as ResearchStatus | undefined;
      const runs: ResearchRunSummary[] = [];
      for await (const run of ctx.client.research.iterate({ limit: Math.min(max, 100), ...(status === undefined ? {} : { status }) })) {
        runs.push(run);
        if (runs.length >= max) break;
      }
      ctx.print(runs, () => table(
        ['ID', 'STATUS', 'MODEL', 'COST_USD', 'CAP_USD', 'CREATED_AT', 'INPUT'],
        runs.map((r) => [r.id, r.status, r.model, r.cost_usd, r.max_cost_usd, r.created_at, r.input.length > 48 ? `${r.input.slice(0, 47)}…` : r.input]),
      ));
    },
  },
  {
    name: 'research cancel',
    summary: 'cancel a research run (charged by the catalog\'s rules)',
    args: '<id>',
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const run = await ctx.client.research.cancel(arg(ctx, 0));
      ctx.print(run, () => {
        if (run.status === 'cancelled') return `${run.id} is cancelled (cost ${run.cost_usd ?? 0} USD)\n`;
        if (run.cost_usd === null) return `${run.id}: cancel requested; svc research wait ${run.id} shows its end\n`;
        return `${run.id} had already ended (${run.status})\n`;
      });
    },
  },
  {
    name: 'credits',
    summary: 'show the account\'s credit balance',
    args: '',
    notes: ['Uses SVC_API_KEY, else SVC_MANAGEMENT_KEY.'],
    options: {},
    positionals: [0, 0],
    run: async (ctx) => {
      const credits = await ctx.client.credits();
      ctx.print(credits, () => keyValues([
        ['balance_usd', credits.balance_usd],
        ['reserved_usd', credits.reserved_usd],
        ['total_purchased_usd', credits.total_purchased_usd],
        ['total_spent_usd', credits.total_spent_usd],
      ]));
    },
  },
  {
    name: 'key',
    summary: 'show the calling key (its kind, limits and rate)',
    args: '',
    notes: ['Uses SVC_API_KEY, else SVC_MANAGEMENT_KEY.'],
    options: {},
    positionals: [0, 0],
    run: async (ctx) => {
      const key = await ctx.client.key();
      ctx.print(key, () => {
        const { request_id: _, rate_limit, ...fields } = key;
        return keyValues([
          ...Object.entries(fields).map(([name, value]): [string, string | number | boolean | null] => [name, value as string | number | boolean | null]),
          ['rate_limit', `${rate_limit.requests_per_second}/s, bursts of ${rate_limit.burst}`],
        ]);
      });
    },
  },
  {
    name: 'usage',
    summary: 'show searches (and extracts) and spend per day, model, key or kind',
    args: '[--from <date>] [--to <date>] [--group-by day|model|key|kind] [--key-id <id>]',
    notes: ['Dates are YYYY-MM-DD (UTC), --to inclusive; default the last 30 days.', 'An API key sees only its own usage. Uses SVC_API_KEY, else SVC_MANAGEMENT_KEY.'],
    options: {
      from: { type: 'string', value: 'date', help: 'first day, YYYY-MM-DD' },
      to: { type: 'string', value: 'date', help: 'last day, YYYY-MM-DD' },
      'group-by': { type: 'string', value: 'day|model|key|kind', help: 'rows per day (default), model, key or kind (search, extract)' },
      'key-id': { type: 'string', value: 'id', help: 'only this API key\'s usage' },
    },
    positionals: [0, 0],
    run: async (ctx) => {
      const groupBy = text(ctx.values['group-by']);
      const usage = await ctx.client.usage({
        from: text(ctx.values.from), to: text(ctx.values.to), key_id: text(ctx.values['key-id']),
        group_by: groupBy as UsageGroupBy | undefined,
      });
      const group = groupBy === 'model' ? 'model' : groupBy === 'key' ? 'key_id' : groupBy === 'kind' ? 'kind' : 'date';
      ctx.print(usage, () =>
        `${usage.from} to ${usage.to}\n` +
        table([group.toUpperCase(), 'SEARCHES', 'FAILED_ATTEMPTS', 'COST_USD'], usage.data.map((row) => [row[group], row.searches, row.failed_attempts, row.cost_usd])) +
        `total: ${usage.total.searches} searches, ${usage.total.cost_usd} USD\n`);
    },
  },
  {
    name: 'keys list',
    summary: 'list the account\'s API keys, every page',
    args: '[--page-size <n>]',
    notes: ['Needs a management key in SVC_MANAGEMENT_KEY. --json prints one JSON array of every key.'],
    options: { 'page-size': { type: 'string', value: 'n', help: 'keys per request, 1..100 (default 20)' } },
    positionals: [0, 0],
    run: async (ctx) => {
      const keys: ApiKey[] = [];
      for await (const key of ctx.client.keys.iterate({ limit: optionalInteger(ctx.values['page-size'], '--page-size') })) keys.push(key);
      ctx.print(keys, () => table(
        ['ID', 'NAME', 'LABEL', 'LIMIT_USD', 'RESET', 'USAGE_USD', 'EXPIRES_AT', 'STATE'],
        keys.map((k) => [k.id, k.name === '' ? '-' : k.name, k.label, k.limit_usd, k.limit_reset, k.usage_usd, k.expires_at, k.disabled ? 'disabled' : 'enabled']),
      ));
    },
  },
  {
    name: 'keys get',
    summary: 'show one API key',
    args: '<id>',
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const key = await ctx.client.keys.get(arg(ctx, 0));
      ctx.print(key, () => keyRecord(key));
    },
  },
  {
    name: 'keys create',
    summary: 'create an API key; its secret is shown once',
    args: '[--name <text>] [--limit-usd <usd>] [--limit-reset <period>] [--expires-at <time>] [--allow-model <model>]... [--allow-ip <cidr>]... [--disabled]',
    options: { ...KEY_FIELDS, disabled: { type: 'boolean', help: 'create it switched off' } },
    positionals: [0, 0],
    run: async (ctx) => {
      const body: CreateKeyRequest = keyFields(ctx.values);
      if (ctx.values.disabled === true) body.disabled = true;
      const key = await ctx.client.keys.create(body);
      ctx.print(key, () => {
        const { secret, ...record } = key;
        return keyRecord(record) + `\nsecret  ${secret}\nStore the secret now: it is shown only once.\n`;
      });
    },
  },
  {
    name: 'keys update',
    summary: 'change an API key\'s name, limit, reset period, expiry or switch',
    args: '<id> [--name <text>] [--limit-usd <usd|none>] [--limit-reset <period|none>] [--expires-at <time|none>] [--allow-model <model|none>]... [--allow-ip <cidr|none>]... [--disabled true|false]',
    notes: ['"none" removes the value; --limit-usd none also removes the reset period.', '--allow-model and --allow-ip replace the whole list.'],
    options: { ...KEY_FIELDS, disabled: { type: 'string', value: 'true|false', help: 'switch the key off (true) or on (false)' } },
    positionals: [1, 1],
    run: async (ctx) => {
      const body: UpdateKeyRequest = keyFields(ctx.values);
      const disabled = text(ctx.values.disabled);
      if (disabled !== undefined) {
        if (disabled !== 'true' && disabled !== 'false') throw new UsageError('--disabled takes true or false');
        body.disabled = disabled === 'true';
      }
      if (Object.keys(body).length === 0) throw new UsageError('nothing to change: give at least one of --name, --limit-usd, --limit-reset, --expires-at, --allow-model, --allow-ip, --disabled');
      const key = await ctx.client.keys.update(arg(ctx, 0), body);
      ctx.print(key, () => keyRecord(key));
    },
  },
  {
    name: 'keys disable',
    summary: 'switch an API key off at once (it can be enabled again)',
    args: '<id>',
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const key = await ctx.client.keys.disable(arg(ctx, 0));
      ctx.print(key, () => `${key.id} is disabled\n`);
    },
  },
  {
    name: 'keys enable',
    summary: 'switch a disabled API key on again',
    args: '<id>',
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const key = await ctx.client.keys.enable(arg(ctx, 0));
      ctx.print(key, () => `${key.id} is enabled\n`);
    },
  },
  {
    name: 'keys delete',
    summary: 'delete an API key for good',
    args: '<id>',
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const deleted = await ctx.client.keys.delete(arg(ctx, 0));
      ctx.print(deleted, () => `${deleted.id} is deleted\n`);
    },
  },
  {
    name: 'provider-keys list',
    summary: 'list the account\'s own provider keys (BYOK)',
    args: '',
    notes: ['Needs a management key in SVC_MANAGEMENT_KEY.'],
    options: {},
    positionals: [0, 0],
    run: async (ctx) => {
      const keys = await ctx.client.providerKeys.list();
      ctx.print(keys, () => table(['PROVIDER', 'LABEL', 'CREATED_AT', 'UPDATED_AT'], keys.data.map((k) => [k.provider, k.label, k.created_at, k.updated_at])));
    },
  },
  {
    name: 'provider-keys get',
    summary: 'show the stored key of one provider (its label only)',
    args: `<${PROVIDERS.join('|')}>`,
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const key = await ctx.client.providerKeys.get(arg(ctx, 0) as Provider);
      ctx.print(key, () => keyValues([['provider', key.provider], ['label', key.label], ['created_at', key.created_at], ['updated_at', key.updated_at]]));
    },
  },
  {
    name: 'provider-keys set',
    summary: 'store or replace the account\'s key for a provider',
    args: `<${PROVIDERS.join('|')}> [--key <key>]`,
    notes: ['Without --key the key is read from standard input (safer: it stays out of the shell history),', 'e.g. svc provider-keys set exa < exa-key.txt'],
    options: { key: { type: 'string', value: 'key', help: 'the provider\'s API key' } },
    positionals: [1, 1],
    run: async (ctx) => {
      let secret = text(ctx.values.key);
      if (secret === undefined) secret = (await ctx.io.readStdin?.())?.trim();
      if (secret === undefined || secret === '') throw new UsageError('give the provider key with --key or on standard input');
      const key = await ctx.client.providerKeys.set(arg(ctx, 0) as Provider, secret);
      ctx.print(key, () => `${key.provider} key stored (${key.label})\n`);
    },
  },
  {
    name: 'provider-keys delete',
    summary: 'delete the account\'s key for a provider',
    args: `<${PROVIDERS.join('|')}>`,
    options: {},
    positionals: [1, 1],
    run: async (ctx) => {
      const deleted = await ctx.client.providerKeys.delete(arg(ctx, 0) as Provider);
      ctx.print(deleted, () => `${deleted.provider} key deleted\n`);
    },
  },
  {
    name: 'audit-log',
    summary: 'who changed what in the account, newest first',
    args: '[--action <action>] [--actor-kind <kind>] [--actor-id <id>] [--target <id>] [--from <time>] [--to <time>] [--max <n>]',
    notes: ['Needs a management key in SVC_MANAGEMENT_KEY. --json prints one JSON array of the entries.', 'Follows the pages until --max entries (default 100) or the end.'],
    options: {
      action: { type: 'string', value: 'action', help: 'only this action, e.g. api_key.update or purchase.start' },
      'actor-kind': { type: 'string', value: 'kind', help: 'management_key, session, oauth_grant or operator' },
      'actor-id': { type: 'string', value: 'id', help: 'only changes made by this key, user or operator' },
      target: { type: 'string', value: 'id', help: 'only changes of this key, provider, checkout or grant' },
      from: { type: 'string', value: 'time', help: 'RFC 3339: entries at or after it' },
      to: { type: 'string', value: 'time', help: 'RFC 3339: entries before it' },
      max: { type: 'string', value: 'n', help: 'at most this many entries (default 100)' },
    },
    positionals: [0, 0],
    run: async (ctx) => {
      const max = optionalInteger(ctx.values.max, '--max') ?? 100;
      if (max < 1) throw new UsageError('--max must be at least 1');
      const query: AuditLogQuery = { limit: Math.min(max, 100) };
      const filters: [keyof AuditLogQuery, string | undefined][] = [
        ['action', text(ctx.values.action)], ['actor_kind', text(ctx.values['actor-kind'])], ['actor_id', text(ctx.values['actor-id'])],
        ['target_id', text(ctx.values.target)], ['from', text(ctx.values.from)], ['to', text(ctx.values.to)],
      ];
      for (const [name, value] of filters) if (value !== undefined) Object.assign(query, { [name]: value });
      const entries: AuditEntry[] = [];
      for await (const entry of ctx.client.auditLog.iterate(query)) {
        entries.push(entry);
        if (entries.length >= max) break;
      }
      ctx.print(entries, () => table(
        ['AT', 'ACTOR', 'ADDRESS', 'ACTION', 'TARGET', 'CHANGES'],
        entries.map((e) => [e.at, `${e.actor.kind}:${e.actor.id}`, e.client_address, e.action, e.target_id,
          Object.entries(e.changes).map(([field, change]) => `${field}: ${JSON.stringify(change.before)} -> ${JSON.stringify(change.after)}`).join('; ')]),
      ));
    },
  },
  {
    name: 'checkout',
    summary: 'start buying credits: prints the payment link',
    args: '<amount_usd> [--success-url <url>] [--cancel-url <url>]',
    notes: ['The amount is 5..10000 USD in whole cents. Credits arrive once the payment is made.', 'Needs a management key in SVC_MANAGEMENT_KEY.'],
    options: {
      'success-url': { type: 'string', value: 'url', help: 'where the buyer goes after paying' },
      'cancel-url': { type: 'string', value: 'url', help: 'where the buyer goes on cancelling' },
    },
    positionals: [1, 1],
    run: async (ctx) => {
      const amount = number(arg(ctx, 0), '<amount_usd>');
      const successUrl = text(ctx.values['success-url']);
      const cancelUrl = text(ctx.values['cancel-url']);
      const session = await ctx.client.checkout({
        amount_usd: amount, ...(successUrl === undefined ? {} : { success_url: successUrl }), ...(cancelUrl === undefined ? {} : { cancel_url: cancelUrl }),
      });
      ctx.print(session, () => `Checkout ${session.id} for ${session.amount_usd} USD, open until ${session.expires_at}. Pay here:\n${session.url}\n`);
    },
  },
];

const GROUPS = ['keys', 'provider-keys'];

/** Waits for the run (a bounded poll) and prints it; a run that did not complete, or a wait that gave up, exits 1. */
async function waitAndPrint(ctx: Context, id: string, maxWaitMs: number): Promise<void> {
  let run: ResearchRun;
  try {
    run = await ctx.client.research.wait(id, { maxWaitMs });
  } catch (error) {
    if (!(error instanceof ResearchWaitTimeoutError)) throw error;
    ctx.print(error.run, () => researchRunText(error.run));
    throw new ResearchNotCompleted(`${id} had not ended within ${maxWaitMs / 1000} s (still ${error.run.status}); svc research wait ${id} waits again`);
  }
  ctx.print(run, () => researchRunText(run));
  if (run.status !== 'completed') throw new ResearchNotCompleted(`${id} ${run.status}${run.error === null ? '' : `: ${run.error}`}`);
}

/** A research run that ended without an answer (or a wait that gave up): exit 1 with the reason. */
class ResearchNotCompleted extends Error {}

function researchRunText(run: ResearchRun): string {
  const cost = run.cost_usd === null ? `holds ${run.held_usd} USD` : `cost ${run.cost_usd} USD`;
  const head = `${run.id} ${run.status}: ${run.model ?? 'no model'}, ${cost} of a ${run.max_cost_usd} USD cap\n`;
  const attempts = run.attempts.map((a) => `  ${a.model} ${a.status}${a.error === null ? '' : `: ${a.error}`}${a.cost_usd === null ? '' : ` (${a.cost_usd} USD)`}\n`).join('');
  if (run.output === null) return head + attempts + (run.error === null ? '' : `error: ${run.error}\n`);
  const answer = run.output.text ?? JSON.stringify(run.output.structured, null, 2);
  const structured = run.output.text !== null && run.output.structured !== null ? `\n${JSON.stringify(run.output.structured, null, 2)}\n` : '';
  const sources = run.sources.length === 0 ? '' : `\nSources:\n${run.sources.map((source, i) => `  ${i + 1}. ${source.title ?? source.url} ${source.url}\n`).join('')}`;
  return `${head}${attempts}\n${answer}\n${structured}${sources}`;
}

function jsonObject(value: string, name: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`${name} must be JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`${name} must be a JSON object`);
  return parsed as Record<string, unknown>;
}

function labels(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw new UsageError(`--metadata takes key=value (got "${pair}")`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

function waitMs(value: string | boolean | string[] | undefined): number {
  const seconds = optionalInteger(value, '--wait-max') ?? RESEARCH_WAIT_DEFAULTS.maxWaitMs / 1000;
  if (seconds < 1 || seconds * 1000 > RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs) throw new UsageError(`--wait-max must be 1 to ${RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs / 1000} seconds`);
  return seconds * 1000;
}

/** Runs one command line; resolves to the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let json = argv.includes('--json');
  try {
    const { command, rest } = findCommand(argv);
    if (command === undefined) {
      const group = rest.group;
      if (argv.includes('--help') || argv.includes('-h')) {
        io.stdout(group === undefined ? mainHelp() : groupHelp(group));
        return EXIT.ok;
      }
      if (group !== undefined && rest.unknown === undefined) {
        io.stderr(groupHelp(group));
        return EXIT.usage;
      }
      if (argv.includes('--version') && group === undefined) {
        io.stdout(`${VERSION}\n`);
        return EXIT.ok;
      }
      if (argv.length === 0) {
        io.stderr(mainHelp());
        return EXIT.usage;
      }
      throw new UsageError(rest.unknown === undefined ? 'give a command' : `unknown command "${rest.unknown}"; see svc ${group === undefined ? '' : `${group} `}--help`);
    }
    const options = { ...GLOBAL_OPTIONS, ...command.options };
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: rest.args,
        options: Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, {
          type: spec.type, ...(spec.short === undefined ? {} : { short: spec.short }), ...(spec.multiple === true ? { multiple: true } : {}),
        }])),
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw new UsageError(`${error instanceof Error ? error.message : String(error)}; see svc ${command.name} --help`);
    }
    const values = parsed.values as Context['values'];
    json = values.json === true;
    if (values.help === true) {
      io.stdout(commandHelp(command));
      return EXIT.ok;
    }
    const [min, max] = command.positionals;
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
      throw new UsageError(`usage: svc ${command.name} ${command.args}`.trimEnd() + `; see svc ${command.name} --help`);
    }
    const client = newClient({
      apiKey: io.env.SVC_API_KEY || undefined,
      managementKey: io.env.SVC_MANAGEMENT_KEY || undefined,
      baseUrl: text(values['base-url']) ?? (io.env.SVC_BASE_URL || undefined),
      ...optionalField('timeoutMs', optionalInteger(values.timeout, '--timeout')),
      ...optionalField('maxRetries', optionalInteger(values['max-retries'], '--max-retries')),
      ...(io.fetch === undefined ? {} : { fetch: io.fetch }),
      ...(io.sleep === undefined ? {} : { sleep: io.sleep }),
      ...(io.now === undefined ? {} : { now: io.now }),
    });
    const ctx: Context = {
      client,
      positionals: parsed.positionals,
      values,
      json,
      io,
      out: io.stdout,
      print: (body, human) => io.stdout(json ? `${JSON.stringify(body, null, 2)}\n` : human()),
    };
    await command.run(ctx);
    return EXIT.ok;
  } catch (error) {
    const code = exitCodeFor(error);
    reportError(error, json, io);
    return code;
  }
}

/** The client; a bad option or SVC_BASE_URL is a usage error. */
function newClient(options: ConstructorParameters<typeof SearchGateway>[0]): SearchGateway {
  try {
    return new SearchGateway(options);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Global options that take a value, so that they may come before the command. */
const VALUE_OPTIONS = Object.entries(GLOBAL_OPTIONS).filter(([, spec]) => spec.type === 'string').map(([name]) => `--${name}`);

function findCommand(argv: string[]): { command: Command | undefined; rest: { args: string[]; group?: string; unknown?: string } } {
  let index = -1;
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i] ?? '';
    if (VALUE_OPTIONS.includes(token)) {
      i += 1;
      continue;
    }
    if (!token.startsWith('-')) {
      index = i;
      break;
    }
  }
  if (index === -1) return { command: undefined, rest: { args: argv } };
  const leading = argv.slice(0, index);
  const first = argv[index] ?? '';
  if (GROUPS.includes(first)) {
    const sub = argv[index + 1];
    const command = sub === undefined || sub.startsWith('-') ? undefined : COMMANDS.find((c) => c.name === `${first} ${sub}`);
    if (command === undefined) return { command, rest: { args: argv, group: first, ...(sub === undefined || sub.startsWith('-') ? {} : { unknown: sub }) } };
    return { command, rest: { args: [...leading, ...argv.slice(index + 2)] } };
  }
  const sub = argv[index + 1];
  if (first === 'research' && sub !== undefined && RESEARCH_SUBCOMMANDS.includes(sub)) {
    return { command: COMMANDS.find((c) => c.name === `research ${sub}`), rest: { args: [...leading, ...argv.slice(index + 2)] } };
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (command === undefined) return { command, rest: { args: argv, unknown: first } };
  return { command, rest: { args: [...leading, ...argv.slice(index + 1)] } };
}

function reportError(error: unknown, json: boolean, io: CliIo): void {
  if (SearchGatewayError.is(error)) {
    if (json) {
      io.stderr(`${JSON.stringify({ status: error.status, code: error.code, message: error.message, request_id: error.requestId, retry_after: error.retryAfter, body: error.body })}\n`);
      return;
    }
    const extra = error.neededUsd !== null ? ` (needed ${error.neededUsd} USD)` : error.retryAfter !== null ? ` (retry after ${error.retryAfter} s)` : '';
    io.stderr(`svc: ${error.status}${error.code === null ? '' : ` ${error.code}`}: ${error.message}${extra}${error.requestId === null ? '' : ` [request ${error.requestId}]`}\n`);
    for (const attempt of error.attempts ?? []) io.stderr(`  ${attempt.model} ${attempt.status}: ${attempt.error}\n`);
    if (error.status === 401 && error.code === 'invalid_api_key' && io.env.SVC_API_KEY === undefined && io.env.SVC_MANAGEMENT_KEY === undefined) {
      io.stderr('svc: set SVC_API_KEY (an API key, svc-...) or SVC_MANAGEMENT_KEY (svc-mgmt-...)\n');
    }
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  const kind = error instanceof UsageError ? 'usage' : SearchGatewayConnectionError.is(error) ? 'connection' : 'error';
  if (json) io.stderr(`${JSON.stringify({ status: null, code: null, kind, message })}\n`);
  else io.stderr(`svc: ${message}\n`);
}

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `svc ${VERSION}: the search gateway from the command line`,
    '',
    'Usage: svc <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Options of every command:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Environment: SVC_API_KEY (an API key: search, research, and credits, key, usage), SVC_MANAGEMENT_KEY',
    '(a management key: keys, provider-keys, checkout; also credits, key, usage without SVC_API_KEY),',
    'SVC_BASE_URL (default http://localhost:8080).',
    '',
    `Exit codes: ${EXIT.ok} ok, ${EXIT.usage} usage error, ${EXIT.auth} 401/403, ${EXIT.payment} 402, ${EXIT.unavailable} 429/503,`,
    `${EXIT.invalid} other 4xx (400, 404, 405), ${EXIT.server} 500/502/other 5xx, ${EXIT.connection} no answer (connection, timeout), ${EXIT.other} other.`,
    '',
    'svc <command> --help shows a command\'s options.',
    '',
  ].join('\n');
}

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  const width = Math.max(...commands.map((c) => c.name.length));
  return [`Usage: svc ${group} <${commands.map((c) => c.name.slice(group.length + 1)).join('|')}> [options]`, '', ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`), '', `svc ${group} <command> --help shows its options.`, ''].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `Usage: svc ${command.name} ${command.args}`.trimEnd(),
    '',
    `${command.summary[0]?.toUpperCase() ?? ''}${command.summary.slice(1)}.`,
    ...(command.notes ?? []),
    '',
    'Options:',
    ...optionLines({ ...command.options, ...GLOBAL_OPTIONS }),
    '',
  ].join('\n');
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const names = Object.entries(options).map(([name, spec]) => [`${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}${spec.value === undefined ? '' : ` <${spec.value}>`}`, spec.help] as const);
  const width = Math.max(...names.map(([name]) => name.length));
  return names.map(([name, help]) => `  ${name.padEnd(width)}  ${help}`);
}

function keyRecord(key: ApiKey): string {
  return keyValues([
    ['id', key.id], ['name', key.name], ['label', key.label], ['limit_usd', key.limit_usd], ['limit_reset', key.limit_reset],
    ['limit_remaining_usd', key.limit_remaining_usd], ['usage_usd', key.usage_usd], ['limit_resets_at', key.limit_resets_at],
    ['usage_total_usd', key.usage_total_usd], ['expires_at', key.expires_at], ['disabled', key.disabled],
    ['created_at', key.created_at], ['updated_at', key.updated_at], ['last_used_at', key.last_used_at],
    ['allowed_models', key.allowed_models === null ? null : key.allowed_models.join(', ')],
    ['allowed_ips', key.allowed_ips === null ? null : key.allowed_ips.join(', ')],
  ]);
}

function keyFields(values: Context['values']): CreateKeyRequest {
  const body: CreateKeyRequest = {};
  const name = text(values.name);
  if (name !== undefined) body.name = name;
  const limit = text(values['limit-usd']);
  if (limit !== undefined) body.limit_usd = limit === 'none' ? null : number(limit, '--limit-usd');
  const reset = text(values['limit-reset']);
  if (reset !== undefined) body.limit_reset = reset === 'none' ? null : (reset as LimitReset);
  const expires = text(values['expires-at']);
  if (expires !== undefined) body.expires_at = expires === 'none' ? null : expires;
  const models = list(values['allow-model']);
  if (models.length > 0) body.allowed_models = models.length === 1 && models[0] === 'none' ? null : models;
  const addresses = list(values['allow-ip']);
  if (addresses.length > 0) body.allowed_ips = addresses.length === 1 && addresses[0] === 'none' ? null : addresses;
  return body;
}

function arg(ctx: Context, index: number): string {
  const value = ctx.positionals[index];
  if (value === undefined) throw new UsageError('missing argument');
  return value;
}

function text(value: string | boolean | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function list(value: string | boolean | string[] | undefined): string[] {
  if (Array.isArray(value)) return value;
  return typeof value === 'string' ? [value] : [];
}

function number(value: string, name: string): number {
  const parsed = value.trim() === '' ? Number.NaN : Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`${name} must be a number (got "${value}")`);
  return parsed;
}

function optionalInteger(value: string | boolean | string[] | undefined, name: string): number | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a whole number (got "${raw}")`);
  return Number(raw);
}

/** `--max-cost <usd>` as the request's max_cost_usd (the API checks its range and decimals). */
function maxCostField(values: Context['values']): { max_cost_usd?: number } {
  const raw = text(values['max-cost']);
  return raw === undefined ? {} : { max_cost_usd: number(raw, '--max-cost') };
}

/** A fan-out's answer as text: the models asked and what each cost, then the merged results with their sources. */
function fanoutText(answer: FanoutSearchResponse): string {
  const head = `${answer.results.length} result${answer.results.length === 1 ? '' : 's'} merged from ${answer.models.join(', ')}: ` +
    `cost ${answer.cost_usd} USD, ${answer.duplicates_removed} duplicate${answer.duplicates_removed === 1 ? '' : 's'} removed, ${answer.latency_ms} ms, request ${answer.request_id}\n`;
  const attempts = answer.attempts.map((a) => `  ${a.model} ${a.status}${a.results === undefined ? '' : ` ${a.results} results`}, ${a.cost_usd} USD${a.error === undefined ? '' : ` (${a.error})`}\n`).join('');
  return head + attempts + '\n' + table(['#', 'TITLE', 'URL', 'FROM'], answer.results.map((r) => [r.position, r.title, r.url, r.sources.map((source) => `${source.model}#${source.position}`).join(' ')]));
}

function optionalField<K extends string>(name: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, number>);
}
