import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import { createGenerator } from 'ts-json-schema-generator';
import { Exa, ExaError } from 'exa-js';
import { tavily } from '@tavily/core';
import { BraveSearch } from 'brave-search';
import { CATALOG, canonicalFilters, EXTRACT_CATALOG, hostnameMatches } from '@svc/contracts';
import type { ExtractModelSpec, FilterName, ModelSpec, Provider, SearchFilters } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import { repoRoot } from '@svc/test-kit';
import { BraveAdapter, ExaAdapter, ExaContentsAdapter, TavilyAdapter, TavilyExtractAdapter } from '../../services/search-gateway/src/providers';
import type { ExtractProvider, ProviderExtractRequest, ProviderSearchRequest, SearchProvider } from '../../services/search-gateway/src/providers';
import { buildSimulator, DEFAULT_KEYS } from '../../tools/provider-sim/src/server';

/**
 * The providers' own client libraries as the contract (docs/providers.md, "The contract
 * suite"). Three checks, none written from our own reading of the APIs:
 *
 * 1. every request shape and enum value the platform uses, sent through the official client
 *    (exa-js, @tavily/core, brave-search) to the simulator: accepted, and answered with
 *    something the official client parses;
 * 2. each adapter's real outgoing request, caught by a loopback recorder, against JSON Schema
 *    generated from the official client's own request types: an adapter cannot send a field
 *    or a value the official client could not;
 * 3. the simulator refusing what the real API refuses, in the real error shape (the official
 *    client reads the status and the message from it).
 */

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------
// JSON Schema from the official clients' request types

const root = repoRoot();
const generator = createGenerator({
  path: join(root, 'test/contract/official-request-types.ts'),
  tsconfig: join(root, 'test/contract/tsconfig.json'),
  skipTypeCheck: true,
  expose: 'export',
  topRef: false,
  jsDoc: 'none',
});

function schemaOf(type: string): Json {
  return generator.createSchema(type) as Json;
}

const camelToSnake = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * Tavily's body as @tavily/core puts it on the wire: every option renamed to snake_case and
 * `query` added. The client's index signature (`[key: string]: any`) is not part of the
 * contract: only its declared options are.
 */
function tavilyBodySchema(type = 'TavilyOptions', head: Record<string, Json> = { query: { type: 'string' } }): Json {
  const options = schemaOf(type);
  const properties = options.properties as Record<string, Json>;
  const renamed: Record<string, Json> = { ...head };
  for (const [name, rules] of Object.entries(properties)) renamed[camelToSnake(name)] = rules;
  return { ...options, properties: renamed, required: Object.keys(head), additionalProperties: false };
}

/** Every value of `property` an object schema (or a union of them) allows, by `enum` and `const`. */
function enumValues(schema: Json, property: string): string[] {
  const out = new Set<string>();
  const definitions = (schema.definitions ?? {}) as Record<string, Json>;
  const visit = (node: unknown, inProperty: boolean): void => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as Json;
    if (typeof n.$ref === 'string') visit(definitions[n.$ref.replace('#/definitions/', '')], inProperty);
    if (inProperty) {
      if (Array.isArray(n.enum)) for (const value of n.enum) if (typeof value === 'string') out.add(value);
      if (typeof n.const === 'string') out.add(n.const);
    }
    for (const branch of [...((n.anyOf as unknown[]) ?? []), ...((n.oneOf as unknown[]) ?? []), ...((n.allOf as unknown[]) ?? [])]) visit(branch, inProperty);
    if (!inProperty && typeof n.properties === 'object' && n.properties !== null) visit((n.properties as Json)[property], true);
  };
  visit(schema, false);
  return [...out].sort();
}

const ajv = new Ajv({ strict: false, allErrors: true });
/** Query strings are text: Brave's numbers and booleans are checked as the client's types after coercion. */
const ajvQuery = new Ajv({ strict: false, allErrors: true, coerceTypes: true });

const EXA_BODY = schemaOf('ExaSearchBody');
const TAVILY_BODY = tavilyBodySchema();
/** exa-js getContents' body: `{ urls, ...ContentsOptions }`. */
const EXA_CONTENTS_BODY = schemaOf('ExaContentsBody');
/** @tavily/core extract's body: `urls` and TavilyExtractOptions in snake_case (its `timeout` too: the client puts it in the payload). */
const TAVILY_EXTRACT_BODY = tavilyBodySchema('TavilyExtractOptionsType', { urls: { type: 'array', items: { type: 'string' } } });
const BRAVE_QUERY: Record<'web' | 'news', Json> = { web: schemaOf('BraveWebQuery'), news: schemaOf('BraveNewsQuery') };
const validators = {
  exa: ajv.compile(EXA_BODY),
  tavily: ajv.compile(TAVILY_BODY),
  exaContents: ajv.compile(EXA_CONTENTS_BODY),
  tavilyExtract: ajv.compile(TAVILY_EXTRACT_BODY),
  brave: { web: ajvQuery.compile(BRAVE_QUERY.web), news: ajvQuery.compile(BRAVE_QUERY.news) },
};

function problems(validate: ValidateFunction, value: unknown): string[] {
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

// ---------------------------------------------------------------------------------------
// The loopback recorder: catches what an adapter really sends and answers a minimal success

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly body: unknown;
}

class Recorder {
  readonly requests: Recorded[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => this.handle(request, response));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://recorder');
      const text = Buffer.concat(chunks).toString('utf8');
      this.requests.push({ method: request.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), body: text === '' ? undefined : JSON.parse(text) });
      const item = { title: 't', url: 'https://example.com/a', description: 'd', content: 'c', score: 0.5 };
      const page = { id: 'https://example.com/a', url: 'https://example.com/a', title: 't', text: 'page text', raw_content: 'page text' };
      const body = url.pathname === '/exa/contents' ? { requestId: 'r', results: [page], statuses: [{ id: page.url, status: 'success' }] }
        : url.pathname === '/tavily/extract' ? { results: [page], failed_results: [], response_time: 0.1, request_id: 'r' }
          : url.pathname.startsWith('/exa') ? { requestId: 'r', results: [item] }
        : url.pathname.startsWith('/tavily') ? { query: 'q', results: [item], response_time: 0.1, request_id: 'r' }
          : url.pathname.endsWith('/news/search') ? { type: 'news', results: [item] } : { type: 'search', web: { results: [item] } };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  }

  last(): Recorded {
    const last = this.requests[this.requests.length - 1];
    if (last === undefined) throw new Error('nothing recorded');
    return last;
  }
}

// ---------------------------------------------------------------------------------------

const modelsOf = (provider: Provider): ModelSpec[] => CATALOG.filter((model) => model.provider === provider);
const extractModelsOf = (provider: Provider): ExtractModelSpec[] => EXTRACT_CATALOG.filter((model) => model.provider === provider);
const QUERY = 'contract suite query';

/** One value of every filter, in canonical form. */
const SAMPLE_FILTERS = canonicalFilters({
  include_domains: ['example.org'], exclude_domains: ['news.example.com'], country: 'DE', language: 'de',
  published_after: '2025-01-01', published_before: '2025-06-30T12:00:00Z', safesearch: 'strict',
}) as SearchFilters;

function only(names: readonly FilterName[]): SearchFilters {
  return Object.fromEntries(names.map((name) => [name, SAMPLE_FILTERS[name]])) as SearchFilters;
}

const FROM_MS = Date.UTC(2025, 0, 1);
const TO_MS = Date.UTC(2025, 5, 30, 12);

/** Every result inside example.org (or a subdomain), outside news.example.com, published within the range. */
function honoured(results: readonly { url: string; published?: string | null }[], dates: boolean): string[] {
  const problems: string[] = [];
  for (const result of results) {
    const host = new URL(result.url).hostname;
    if (!hostnameMatches(host, 'example.org')) problems.push(`${result.url} outside example.org`);
    if (hostnameMatches(host, 'news.example.com')) problems.push(`${result.url} inside news.example.com`);
    if (dates) {
      const ms = Date.parse(result.published ?? '');
      if (!(ms >= FROM_MS && ms <= TO_MS)) problems.push(`${result.url} published ${String(result.published)}`);
    }
  }
  return problems;
}

describe('the providers\' official clients as the contract', () => {
  let simulator: FastifyInstance;
  let simUrl: string;
  const recorder = new Recorder();
  let adapters: Record<Provider, SearchProvider>;
  let extractors: Partial<Record<Provider, ExtractProvider>>;

  beforeAll(async () => {
    simulator = buildSimulator();
    simUrl = await simulator.listen({ host: '127.0.0.1', port: 0 });
    await recorder.start();
    adapters = {
      exa: new ExaAdapter({ baseUrl: `${recorder.url}/exa` }),
      tavily: new TavilyAdapter({ baseUrl: `${recorder.url}/tavily` }),
      brave: new BraveAdapter({ baseUrl: `${recorder.url}/brave/res/v1` }),
    };
    extractors = {
      exa: new ExaContentsAdapter({ baseUrl: `${recorder.url}/exa` }),
      tavily: new TavilyExtractAdapter({ baseUrl: `${recorder.url}/tavily` }),
    };
  });

  afterAll(async () => {
    await Promise.all(Object.values(adapters).map((adapter) => adapter.close()));
    await Promise.all(Object.values(extractors).map((extractor) => extractor.close()));
    await recorder.stop();
    await simulator.close();
  });

  const exaClient = (): Exa => new Exa(DEFAULT_KEYS.exa, `${simUrl}/exa`);
  const tavilyClient = () => tavily({ apiKey: DEFAULT_KEYS.tavily, apiBaseURL: `${simUrl}/tavily` });
  const braveClient = (): BraveSearch => {
    const client = new BraveSearch(DEFAULT_KEYS.brave);
    // The client has no base URL option; its one field is pointed at the simulator.
    (client as unknown as { baseUrl: string }).baseUrl = `${simUrl}/brave/res/v1`;
    return client;
  };

  const call = (model: ModelSpec, maxResults = 5): ProviderSearchRequest => ({ query: QUERY, model, maxResults, apiKey: 'recorder-key', timeoutMs: 5_000 });

  describe('1. official client → simulator', () => {
    const exaTypes = enumValues(EXA_BODY, 'type');
    const tavilyDepths = enumValues(TAVILY_BODY, 'search_depth');

    it('reads the enums from the official types (a guard: the generator saw them)', () => {
      expect(exaTypes).toEqual(expect.arrayContaining(['auto', 'fast', 'instant', 'deep']));
      expect(tavilyDepths).toEqual(expect.arrayContaining(['basic', 'advanced']));
    });

    it.each(exaTypes)('exa-js: type "%s" is accepted and its answer parsed', async (type) => {
      const answer = await exaClient().search(QUERY, { type: type as 'auto', numResults: 3, contents: { highlights: true } });
      expect(answer.results).toHaveLength(3);
      expect(answer.results[0]).toEqual(expect.objectContaining({ url: expect.stringMatching(/^https:\/\//), title: expect.any(String) }));
    });

    it.each(modelsOf('exa').map((model) => [model.id, model] as const))('exa-js: %s as the catalog sends it', async (_id, model) => {
      const answer = await exaClient().search(QUERY, { type: model.upstreamVariant as 'auto', numResults: model.maxResults, contents: { highlights: true } });
      expect(answer.results).toHaveLength(model.maxResults);
    });

    it.each(tavilyDepths)('@tavily/core: search_depth "%s" is accepted and its answer parsed', async (depth) => {
      const answer = await tavilyClient().search(QUERY, { searchDepth: depth as 'basic', maxResults: 4, includeUsage: true });
      expect(answer.results).toHaveLength(4);
      expect(answer.results[0]).toEqual(expect.objectContaining({ url: expect.stringMatching(/^https:\/\//), content: expect.any(String) }));
    });

    it.each(modelsOf('tavily').map((model) => [model.id, model] as const))('@tavily/core: %s as the catalog sends it', async (_id, model) => {
      const answer = await tavilyClient().search(QUERY, { searchDepth: model.upstreamVariant as 'basic', maxResults: model.maxResults });
      expect(answer.results).toHaveLength(model.maxResults);
    });

    it('exa-js: the filter fields are accepted and honoured in what comes back', async () => {
      const answer = await exaClient().search(QUERY, {
        type: 'fast', numResults: 20, includeDomains: ['example.org'], excludeDomains: ['news.example.com'], userLocation: 'DE',
        startPublishedDate: new Date(FROM_MS).toISOString(), endPublishedDate: new Date(TO_MS).toISOString(), contents: { highlights: true },
      });
      expect(answer.results).toHaveLength(20);
      expect(honoured(answer.results.map((r) => ({ url: r.url, published: r.publishedDate })), true)).toEqual([]);
    });

    it('@tavily/core: the filter fields are accepted and honoured in what comes back', async () => {
      const answer = await tavilyClient().search(QUERY, { searchDepth: 'fast', maxResults: 20, includeDomains: ['example.org'], excludeDomains: ['news.example.com'], startDate: '2025-01-01', endDate: '2025-06-29' });
      expect(answer.results).toHaveLength(20);
      expect(honoured(answer.results.map((r) => ({ url: r.url, published: r.publishedDate })), true)).toEqual([]);
    });

    it('brave-search: country, search_lang, safesearch and a freshness range are accepted, and the range honoured', async () => {
      const answer = await braveClient().webSearch(QUERY, { count: 20, country: 'DE', search_lang: 'de', safesearch: 'strict' as never, freshness: '2025-01-01to2025-06-29' });
      const results = answer.web?.results ?? [];
      expect(results).toHaveLength(20);
      for (const result of results) {
        const ms = Date.parse(`${String(result.page_age)}Z`);
        expect(ms >= FROM_MS && ms <= TO_MS).toBe(true);
      }
    });

    it.each(modelsOf('brave').map((model) => [model.id, model] as const))('brave-search: %s as the catalog sends it', async (_id, model) => {
      const client = braveClient();
      const results = model.upstreamVariant === 'news'
        ? (await client.newsSearch(QUERY, { count: model.maxResults })).results
        : (await client.webSearch(QUERY, { count: model.maxResults })).web?.results ?? [];
      expect(results).toHaveLength(model.maxResults);
      expect(results[0]).toEqual(expect.objectContaining({ url: expect.stringMatching(/^https:\/\//), title: expect.any(String) }));
    });
  });

  describe('2. each adapter\'s outgoing request against the official request types', () => {
    it.each(CATALOG.map((model) => [model.id, model] as const))('%s', async (_id, model) => {
      const outcome = await adapters[model.provider].search(call(model, model.maxResults));
      expect(outcome).toEqual(expect.objectContaining({ ok: true }));
      const sent = recorder.last();
      if (model.provider === 'exa') {
        expect([sent.method, sent.path]).toEqual(['POST', '/exa/search']);
        expect(problems(validators.exa, sent.body)).toEqual([]);
        expect(sent.body).toEqual(expect.objectContaining({ type: model.upstreamVariant }));
      } else if (model.provider === 'tavily') {
        expect([sent.method, sent.path]).toEqual(['POST', '/tavily/search']);
        expect(problems(validators.tavily, sent.body)).toEqual([]);
        expect(sent.body).toEqual(expect.objectContaining({ search_depth: model.upstreamVariant }));
      } else {
        const endpoint = model.upstreamVariant as 'web' | 'news';
        expect([sent.method, sent.path]).toEqual(['GET', `/brave/res/v1/${endpoint}/search`]);
        expect(problems(validators.brave[endpoint], sent.query)).toEqual([]);
      }
    });

    it.each(CATALOG.map((model) => [model.id, model] as const))('%s with every filter it honours: each reaches the wire, all within the official types', async (_id, model) => {
      await adapters[model.provider].search(call(model));
      const bare = recorder.last();
      for (const name of model.supportedFilters) {
        await adapters[model.provider].search({ ...call(model), filters: only([name]) });
        const sent = recorder.last();
        expect({ name, changed: JSON.stringify(sent) !== JSON.stringify(bare) }).toEqual({ name, changed: true });
      }
      await adapters[model.provider].search({ ...call(model), filters: only(model.supportedFilters) });
      const sent = recorder.last();
      if (model.provider === 'exa') expect(problems(validators.exa, sent.body)).toEqual([]);
      else if (model.provider === 'tavily') expect(problems(validators.tavily, sent.body)).toEqual([]);
      else expect(problems(validators.brave[model.upstreamVariant as 'web' | 'news'], sent.query)).toEqual([]);
    });

    it('the recorder check can fail: a value the official types do not allow is reported', () => {
      expect(problems(validators.exa, { query: 'x', type: 'lite' })).not.toEqual([]);
      expect(problems(validators.tavily, { query: 'x', search_depth: 'turbo' })).not.toEqual([]);
      expect(problems(validators.tavily, { query: 'x', unknown_field: 1 })).not.toEqual([]);
      expect(problems(validators.brave.web, { q: 'x', safesearch: 'sometimes' })).not.toEqual([]);
    });
  });

  describe('3. the simulator refuses what the real API refuses, in the real error shape', () => {
    it('Exa: an unknown type is 400 with {requestId, error, tag}, read by exa-js as an ExaError', async () => {
      const error = await exaClient().search(QUERY, { type: 'lite' as 'auto' }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ExaError);
      expect((error as ExaError).statusCode).toBe(400);
      const raw = await fetch(`${simUrl}/exa/search`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEFAULT_KEYS.exa }, body: JSON.stringify({ query: QUERY, type: 'lite' }) });
      expect(raw.status).toBe(400);
      expect(await raw.json()).toEqual({ requestId: expect.any(String), error: expect.stringContaining('type'), tag: 'INVALID_REQUEST_BODY' });
    });

    it('Exa: numResults beyond 100 is 400', async () => {
      const error = await exaClient().search(QUERY, { numResults: 101 }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ExaError);
      expect((error as ExaError).statusCode).toBe(400);
    });

    it('Tavily: an unknown search_depth or max_results beyond 20 is 400 with {detail: {error}}, read by @tavily/core', async () => {
      for (const options of [{ searchDepth: 'turbo' as 'basic' }, { maxResults: 21 }]) {
        const error = await tavilyClient().search(QUERY, options).then(() => null, (e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(/^Invalid (search_depth|max_results)/);
      }
    });

    it('Brave: a count beyond the endpoint\'s cap is 422 VALIDATION in an ErrorResponse, read by brave-search', async () => {
      for (const [endpoint, cap] of [['web', 20], ['news', 50]] as const) {
        const client = braveClient();
        const error = await (endpoint === 'web' ? client.webSearch(QUERY, { count: cap + 1 }) : client.newsSearch(QUERY, { count: cap + 1 })).then(() => null, (e: unknown) => e);
        expect((error as Error).message).toMatch(/^API error \(422\)/);
        expect((error as { responseData?: unknown }).responseData).toEqual(expect.objectContaining({ type: 'ErrorResponse', error: expect.objectContaining({ code: 'VALIDATION', status: 422 }) }));
      }
    });
  });

  describe('4. page content: Exa /contents, Tavily /extract and search contents, through the official clients', () => {
    const URLS = ['https://docs.example.org/contract/page', 'https://example.com/sim-fail-exa/page', 'https://example.net/sim-fail-all/page'];
    const extractCall = (model: ExtractModelSpec, overrides: Partial<ProviderExtractRequest> = {}): ProviderExtractRequest => ({
      urls: ['https://example.com/a'], model, format: 'text', maxCharsPerUrl: 2_000, query: null, maxAgeS: null, apiKey: 'recorder-key', timeoutMs: 5_000, ...overrides,
    });

    it('exa-js getContents: text cut at maxCharacters, a result per page fetched and a status per URL (failures as errors with their tag)', async () => {
      const answer = await exaClient().getContents(URLS, { text: { maxCharacters: 500 }, maxAgeHours: 24 });
      expect(answer.results.map((r) => r.url)).toEqual([URLS[0]]);
      expect(answer.results[0]?.text.length).toBeLessThanOrEqual(500);
      const statuses = (answer.statuses ?? []) as unknown as { id: string; status: string; error?: { tag: string; httpStatusCode: number } }[];
      expect(statuses.map((status) => [status.id, status.status])).toEqual([[URLS[0], 'success'], [URLS[1], 'error'], [URLS[2], 'error']]);
      expect(statuses[1]?.error).toEqual({ tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 });
    });

    it('exa-js getContents: highlights for a query, and maxAgeHours 0 (live)', async () => {
      const answer = await exaClient().getContents([URLS[0] ?? ''], { highlights: { query: 'contract page', maxCharacters: 300 }, maxAgeHours: 0 });
      expect(answer.results[0]?.highlights.join('').length).toBeLessThanOrEqual(300);
    });

    it('@tavily/core extract: results and failedResults as the client maps them, credits per 5 successful URLs, each depth and format', async () => {
      for (const extractDepth of ['basic', 'advanced'] as const) {
        for (const format of ['markdown', 'text'] as const) {
          const answer = await tavilyClient().extract(URLS, { extractDepth, format, includeUsage: true, timeout: 10 });
          expect(answer.results.map((r) => r.url)).toEqual([URLS[0], URLS[1]]);
          expect(answer.results[0]?.rawContent.length).toBeGreaterThan(0);
          expect(answer.failedResults).toEqual([{ url: URLS[2], error: expect.any(String) }]);
          expect(answer.usage).toEqual({ credits: extractDepth === 'advanced' ? 2 : 1 });
        }
      }
      const ranked = await tavilyClient().extract([URLS[0] ?? ''], { query: 'contract page', chunksPerSource: 2 });
      for (const chunk of (ranked.results[0]?.rawContent ?? '').split(' [...] ')) expect(chunk.length).toBeLessThanOrEqual(500);
    });

    it('each search model\'s contents, as the catalog sends them, are accepted and answered (Exa text and highlights, Tavily raw content)', async () => {
      const text = await exaClient().search(QUERY, { type: 'fast', numResults: 3, contents: { text: { maxCharacters: 400 }, highlights: true } });
      for (const result of text.results) expect(result.text.length).toBeLessThanOrEqual(400);
      const highlights = await exaClient().search(QUERY, { type: 'fast', numResults: 3, contents: { highlights: { maxCharacters: 200 } } });
      for (const result of highlights.results) expect(result.highlights.join('').length).toBeLessThanOrEqual(200);
      const raw = await tavilyClient().search(QUERY, { searchDepth: 'basic', maxResults: 3, includeRawContent: 'text' });
      for (const result of raw.results) expect(typeof result.rawContent).toBe('string');
    });

    it.each(EXTRACT_CATALOG.map((model) => [model.id, model] as const))('%s: the adapter\'s request, with every option and format it honours, within the official request types', async (_id, model) => {
      const extractor = extractors[model.provider];
      if (extractor === undefined) throw new Error(`no extractor for ${model.provider}`);
      const variants: Partial<ProviderExtractRequest>[] = [{}];
      for (const format of model.supportedFormats) variants.push({ format });
      if (model.supportedOptions.includes('query')) variants.push({ query: 'rank by this' });
      if (model.supportedOptions.includes('max_age_s')) variants.push({ maxAgeS: 0 }, { maxAgeS: 7_200 });
      for (const variant of variants) {
        const outcome = await extractor.extract(extractCall(model, variant));
        expect(outcome).toEqual(expect.objectContaining({ ok: true }));
        const sent = recorder.last();
        if (model.provider === 'exa') {
          expect([sent.method, sent.path]).toEqual(['POST', '/exa/contents']);
          expect(problems(validators.exaContents, sent.body)).toEqual([]);
        } else {
          expect([sent.method, sent.path]).toEqual(['POST', '/tavily/extract']);
          expect(problems(validators.tavilyExtract, sent.body)).toEqual([]);
          expect(sent.body).toEqual(expect.objectContaining({ extract_depth: model.upstreamVariant }));
        }
      }
    });

    it.each(CATALOG.filter((model) => model.supportedContents.length > 1).map((model) => [model.id, model] as const))('%s with each contents it returns: within the official request types', async (_id, model) => {
      for (const contents of model.supportedContents) {
        await adapters[model.provider].search({ ...call(model), contents, maxCharsPerResult: 1_000 });
        const sent = recorder.last();
        expect(problems(model.provider === 'exa' ? validators.exa : validators.tavily, sent.body)).toEqual([]);
      }
    });

    it('the extract recorder check can fail: a field or value the official types do not allow is reported', () => {
      expect(problems(validators.exaContents, { urls: ['https://x.test'], livecrawl: 'sometimes' })).not.toEqual([]);
      expect(problems(validators.tavilyExtract, { urls: ['https://x.test'], extract_depth: 'deep' })).not.toEqual([]);
      expect(problems(validators.tavilyExtract, { urls: ['https://x.test'], max_age: 3 })).not.toEqual([]);
    });

    it('the simulator refuses what the real APIs refuse: Exa in {requestId, error, tag} (an ExaError), Tavily in {detail: {error}}', async () => {
      const error = await exaClient().getContents(['https://x.test'], { livecrawl: 'sometimes' as 'never' }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ExaError);
      expect((error as ExaError).statusCode).toBe(400);
      for (const options of [{ extractDepth: 'deep' as 'basic' }, { chunksPerSource: 2 }]) {
        const refused = await tavilyClient().extract(['https://x.test'], options).then(() => null, (e: unknown) => e);
        expect(refused).toBeInstanceOf(Error);
        expect((refused as Error).message).toMatch(/^Invalid (extract_depth|chunks_per_source)/);
      }
      const tooMany = await tavilyClient().extract(Array.from({ length: 21 }, (_, i) => `https://x.test/${i}`)).then(() => null, (e: unknown) => e);
      expect((tooMany as Error).message).toMatch(/Too many URLs/);
      expect(extractModelsOf('brave')).toEqual([]);
    });
  });
});
