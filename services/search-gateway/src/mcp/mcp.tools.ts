import { ANSWER_SCHEMAS, CATALOG, EXTRACT_CATALOG, FILTER_DESCRIPTIONS, inlineAnswerSchema, LIMITS } from '@svc/contracts';
import type { ErrorBody } from '@svc/errors';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { EXTRACT_BODY_SCHEMA } from '../search/extract.schema';
import { DEFAULT_MAX_RESULTS, MAX_CACHE_MAX_AGE_S, MAX_MODELS, MAX_QUERY_CHARS, SEARCH_BODY_SCHEMA } from '../search/search.schema';
import { RESEARCH_TOOLS } from './mcp.research';

/**
 * The MCP tools of /mcp: their JSON Schemas (input and output) and how their results read as
 * text. Everything here is pure; mcp.endpoint.ts runs the tools.
 */

export const TOOL_NAMES = ['web_search', 'web_fetch', 'list_models', 'get_credits', 'deep_research', 'get_research'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

const MODEL_IDS = CATALOG.map((model) => model.id).join(', ');
const EXTRACT_MODEL_IDS = EXTRACT_CATALOG.map((model) => model.id).join(', ');

/**
 * The default `max_total_chars` of web_search and web_fetch (LIMITS.mcpTotalChars): a tool
 * result shows its text twice (the text block and the structured content), so at most about
 * 40,000 characters of page text, under 25,000 tokens of output at 2 characters a token or
 * more. A call may send its own (up to LIMITS.maxTotalChars.max).
 */
export const MCP_DEFAULT_TOTAL_CHARS = LIMITS.mcpTotalChars.default;

const MAX_COST_DESCRIPTION = `The most this call may cost, in USD (above 0, at most ${LIMITS.maxCostUsd.max}, 6 decimals at most). A model whose most possible cost would take the call past it is skipped; when none can run, the call fails with max_cost_exceeded and costs nothing.`;

const BUDGET_DESCRIPTION = `The most characters of text in the whole answer (${LIMITS.maxTotalChars.min} to ${LIMITS.maxTotalChars.max}); the last results are cut or dropped and the answer says truncated. Default here: ${MCP_DEFAULT_TOTAL_CHARS}, which keeps a tool result under 25,000 tokens.`;

/** What each field of POST /v1/search means, for the agent reading the tool's schema. */
const FIELD_DESCRIPTIONS: Readonly<Record<keyof typeof SEARCH_BODY_SCHEMA.properties, string>> = {
  query: `The search query (1 to ${MAX_QUERY_CHARS} characters after trimming).`,
  model: `One model id: ${MODEL_IDS}. Give model, models, or both (model is tried first).`,
  models: `Model ids in fallback order (up to ${MAX_MODELS}): the next is tried only when the one before fails; only the model that answers is charged. Ids: ${MODEL_IDS}.`,
  max_results: `Most results wanted (1 to 100, default ${DEFAULT_MAX_RESULTS}); each model caps it (see list_models). The price depends on it.`,
  cache: 'The shared result cache: "default" answers a repeated search from a stored answer at the model\'s cache price (see list_models), "refresh" asks the provider and stores the new answer, "off" neither looks up nor stores.',
  cache_max_age_s: `The oldest stored answer accepted, in seconds (0 to ${MAX_CACHE_MAX_AGE_S}); default: any answer the cache still holds.`,
  // A model that cannot honour every filter sent is skipped, never called with a filter dropped (see list_models' supported_filters).
  ...FILTER_DESCRIPTIONS,
  contents: 'What each result carries besides its snippet: "none" (default), "text" (the page\'s text) or "highlights" (its most relevant passages). A model that cannot return them is skipped (see supported_contents in list_models).',
  max_chars_per_result: `With contents: the most characters of text (or of all highlights) per result (${LIMITS.searchCharsPerResult.min} to ${LIMITS.searchCharsPerResult.max}, default ${LIMITS.searchCharsPerResult.default}).`,
  max_total_chars: BUDGET_DESCRIPTION,
  strategy: `How the models are used: "fallback" (default) tries them in order and answers with the first that answers; "fanout" calls ${LIMITS.fanoutModels.min} to ${LIMITS.fanoutModels.max} models at once and merges their results (each URL once, ranked by reciprocal rank fusion, with the models that returned it), each model charged for what it returned.`,
  fanout_wait_ms: `With strategy "fanout": how long to wait for the models once called (${LIMITS.fanoutWaitMs.min} to ${LIMITS.fanoutWaitMs.max} ms); a model still running then is cancelled and keeps its base price.`,
  max_cost_usd: MAX_COST_DESCRIPTION,
};

/** What each field of POST /v1/extract means, for the agent reading web_fetch's schema. */
const FETCH_FIELD_DESCRIPTIONS: Readonly<Record<keyof typeof EXTRACT_BODY_SCHEMA.properties, string>> = {
  urls: `The pages to read: ${LIMITS.extractUrls.min} to ${LIMITS.extractUrls.max} http or https URLs (each at most ${LIMITS.extractUrlChars.max} characters).`,
  model: `One extract model: ${EXTRACT_MODEL_IDS}. Give model, models, or both (model is tried first).`,
  models: `Extract models in fallback order (up to ${MAX_MODELS}): a URL the first cannot fetch is tried at the next; only the URLs that come back are charged. Ids: ${EXTRACT_MODEL_IDS}.`,
  format: 'The text format: "text" (default) or "markdown". A model that cannot return it is skipped (see supported_formats in list_models).',
  max_chars_per_url: `The most characters of text per page (${LIMITS.extractCharsPerUrl.min} to ${LIMITS.extractCharsPerUrl.max}, default ${LIMITS.extractCharsPerUrl.default}).`,
  query: `Optional (1 to ${LIMITS.extractQuery.max} characters): rank or trim each page's text by relevance to it. A model that cannot is skipped.`,
  max_age_s: 'Optional: accept provider-cached page content at most this many seconds old (0: fetch live). A model without freshness control is skipped.',
  max_total_chars: BUDGET_DESCRIPTION,
  cache: 'The shared result cache: "default" serves a page read before at the model\'s cache price (see list_models), "refresh" fetches it again and stores it, "off" neither.',
  cache_max_age_s: `The oldest stored page accepted, in seconds (0 to ${MAX_CACHE_MAX_AGE_S}); default: any page the cache still holds.`,
  max_cost_usd: MAX_COST_DESCRIPTION,
};

/**
 * The optional `idempotency_key` argument: the HTTP Idempotency-Key header's rules
 * (docs/api.md 10.7), as a tool argument, for clients without a session (the 2026-07-28
 * revision has none). It is taken out of the arguments before they are checked against
 * the search body's schema, so it is not part of what "the same arguments" compares.
 */
export const IDEMPOTENCY_KEY_ARGUMENT = 'idempotency_key';
export const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]*[\\x21-\\x7e][\\x20-\\x7e]*$',
  description:
    'Optional. A value of your choice (1 to 255 printable ASCII characters) that makes the call safe to send again: the same key with the same ' +
    'arguments within 24 hours returns the first call\'s result and is charged once; the same key with other arguments is an error. ' +
    'Use a new key for each new search, the same one when retrying.',
} as const;

/**
 * The web_search input schema: POST /v1/search's body schema with a description on each
 * field, plus `idempotency_key`. The search's rules are the body schema's own (the same
 * object's keywords), and the arguments less `idempotency_key` are validated by the same
 * compiled validator as the HTTP body.
 */
export const WEB_SEARCH_INPUT_SCHEMA = {
  ...SEARCH_BODY_SCHEMA,
  properties: {
    ...Object.fromEntries(
      Object.entries(SEARCH_BODY_SCHEMA.properties).map(([name, rules]) => [name, { ...rules, description: FIELD_DESCRIPTIONS[name as keyof typeof FIELD_DESCRIPTIONS] }]),
    ),
    [IDEMPOTENCY_KEY_ARGUMENT]: IDEMPOTENCY_KEY_SCHEMA,
  },
} as const;

/**
 * The 200 body of POST /v1/search: the search answer's one schema (@svc/contracts): a fallback's
 * answer or a fan-out's (SearchAnswer), its references to the result, attempt, model and provider
 * schemas written out in place. An MCP output schema is an object's: `type` says so at the root.
 */
export const WEB_SEARCH_OUTPUT_SCHEMA = { type: 'object', ...inlineAnswerSchema(ANSWER_SCHEMAS.SearchAnswer) };

/**
 * The web_fetch input schema: POST /v1/extract's body schema with a description on each field,
 * plus `idempotency_key`; the arguments less it are validated by the route's compiled validator.
 */
export const WEB_FETCH_INPUT_SCHEMA = {
  ...EXTRACT_BODY_SCHEMA,
  properties: {
    ...Object.fromEntries(
      Object.entries(EXTRACT_BODY_SCHEMA.properties).map(([name, rules]) => [name, { ...rules, description: FETCH_FIELD_DESCRIPTIONS[name as keyof typeof FETCH_FIELD_DESCRIPTIONS] }]),
    ),
    [IDEMPOTENCY_KEY_ARGUMENT]: IDEMPOTENCY_KEY_SCHEMA,
  },
} as const;

/** The 200 body of POST /v1/extract: the extract answer's one schema (@svc/contracts), written out. */
export const WEB_FETCH_OUTPUT_SCHEMA = inlineAnswerSchema(ANSWER_SCHEMAS.ExtractResponse);

/** GET /v1/models: the model list's one schema (@svc/contracts), written out. */
export const LIST_MODELS_OUTPUT_SCHEMA = inlineAnswerSchema(ANSWER_SCHEMAS.ModelList);

/** GET /v1/credits: the credits' one schema (@svc/contracts), written out. */
export const GET_CREDITS_OUTPUT_SCHEMA = inlineAnswerSchema(ANSWER_SCHEMAS.Credits);

const NO_ARGUMENTS = { type: 'object', properties: {}, additionalProperties: false } as const;

/** A tool that takes no arguments and only reads this deployment's own data (its annotations' title is its title). */
function readOnlyTool(name: string, title: string, description: string, outputSchema: object): Tool {
  return {
    name,
    title,
    description,
    inputSchema: NO_ARGUMENTS as unknown as Tool['inputSchema'],
    outputSchema: outputSchema as unknown as Tool['outputSchema'],
    annotations: { title, readOnlyHint: true, openWorldHint: false },
  };
}

/** tools/list. The objects are built once; every request's server hands out the same array. */
export const TOOLS: readonly Tool[] = [
  {
    name: 'web_search',
    title: 'Web search',
    description:
      'Search the web through Brave, Exa or Tavily with one API key and one prepaid balance. Give a model or an ordered list of models: ' +
      'when one fails the next is tried, and only the model that answers is charged; or strategy "fanout" to ask several at once and get their results merged, each URL once. ' +
      'max_cost_usd caps what the call may cost. Optional filters (domains, country, language, dates, safesearch) are never dropped: ' +
      'a model that cannot honour one is skipped (see supported_filters in list_models). Returns the results (title, url, snippet, date; with contents, the page text or highlights) and what the search cost. ' +
      `The answer's text is capped at ${MCP_DEFAULT_TOTAL_CHARS} characters unless max_total_chars says otherwise.`,
    inputSchema: WEB_SEARCH_INPUT_SCHEMA as unknown as Tool['inputSchema'],
    outputSchema: WEB_SEARCH_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
    annotations: { title: 'Web search', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'web_fetch',
    title: 'Read web pages',
    description:
      'Read the text of known web pages (up to 20 URLs) through Exa or Tavily with the same key and balance as web_search. Give an extract model or an ordered list: ' +
      'a URL the first model cannot fetch is tried at the next, and only the URLs that come back are charged. Returns each page\'s title and text (cut at max_chars_per_url), ' +
      `the URLs no model could fetch, and what it cost. The answer's text is capped at ${MCP_DEFAULT_TOTAL_CHARS} characters unless max_total_chars says otherwise.`,
    inputSchema: WEB_FETCH_INPUT_SCHEMA as unknown as Tool['inputSchema'],
    outputSchema: WEB_FETCH_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
    annotations: { title: 'Read web pages', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  readOnlyTool(
    'list_models',
    'List search models',
    'The models web_search and web_fetch accept: id, kind (search or extract), provider, description, result cap, price and whether the deployment serves it.',
    LIST_MODELS_OUTPUT_SCHEMA,
  ),
  readOnlyTool(
    'get_credits',
    'Credit balance',
    'The account\'s prepaid credit balance in USD: spendable now, held by searches in flight, bought and spent in all.',
    GET_CREDITS_OUTPUT_SCHEMA,
  ),
  ...RESEARCH_TOOLS,
];

// ---------------------------------------------------------------------------------------
// Results as text

interface SearchResultView {
  position: number;
  title: string;
  url: string;
  snippet: string;
  published_at: string | null;
  text?: string;
  highlights?: readonly string[];
  /** A fan-out's merged result: the models that returned it and where. */
  sources?: readonly { model: string; position: number }[];
}

interface AttemptTextView {
  model: string;
  status: string;
  /** Absent on a fan-out's answered model. */
  error?: string;
  cost_usd?: number;
}

/** The parts of a 200 search body the text shows (a fallback's: `model`; a fan-out's: `strategy`, `models`, each result's `sources`). */
export interface SearchSuccessView {
  request_id: string;
  model?: string;
  strategy?: 'fanout';
  models?: readonly string[];
  duplicates_removed?: number;
  results: readonly SearchResultView[];
  cost_usd: number;
  attempts: readonly AttemptTextView[];
  cache?: { status: string; age_s: number };
  truncated?: boolean;
}

function attemptLine(attempt: AttemptTextView): string {
  const cost = attempt.cost_usd === undefined ? '' : `, kept ${attempt.cost_usd} USD`;
  return `- ${attempt.model}: ${attempt.status} (${attempt.error ?? ''}${cost})`;
}

/** A search's answer as text an agent reads: one numbered block per result. */
export function searchText(body: SearchSuccessView): string {
  const count = body.results.length;
  const cached = body.cache === undefined || body.cache.status === 'off' || body.cache.status === 'miss'
    ? ''
    : `, ${body.cache.status === 'hit' ? 'from the cache' : 'joined an identical search'}, ${body.cache.age_s} s old`;
  const fanout = body.strategy === 'fanout';
  const from = fanout ? `merged from ${(body.models ?? []).join(', ')}` : `from ${body.model ?? ''}`;
  const lines = [`${count} result${count === 1 ? '' : 's'} ${from} (cost ${body.cost_usd} USD${cached}, request ${body.request_id})`];
  if (fanout) {
    lines.push(`Models asked (${body.duplicates_removed ?? 0} duplicate results removed):`);
    for (const attempt of body.attempts) {
      // A fan-out shows every model's cost; a failed or skipped one that cost nothing shows none.
      if (attempt.status === 'success') lines.push(`- ${attempt.model}: answered (${attempt.cost_usd ?? 0} USD)`);
      else lines.push(attemptLine(attempt.cost_usd === 0 ? { model: attempt.model, status: attempt.status, error: attempt.error ?? '' } : attempt));
    }
  } else if (body.attempts.length > 0) {
    lines.push('Tried before it:');
    for (const attempt of body.attempts) lines.push(attemptLine(attempt));
  }
  for (const result of body.results) {
    lines.push('', `${result.position}. ${result.title}`, `   ${result.url}`);
    if (result.sources !== undefined) lines.push(`   from ${result.sources.map((source) => `${source.model} #${source.position}`).join(', ')}`);
    if (result.published_at !== null) lines.push(`   published ${result.published_at}`);
    if (result.snippet !== '') lines.push(`   ${result.snippet}`);
    if (result.highlights !== undefined) for (const highlight of result.highlights) lines.push(`   > ${highlight}`);
    if (result.text !== undefined && result.text !== '') lines.push('', result.text);
  }
  if (body.truncated === true) lines.push('', '(cut to max_total_chars: the last results are shortened or left out)');
  return lines.join('\n');
}

/** The parts of a 200 extract body the text shows. */
export interface FetchSuccessView {
  request_id: string;
  results: readonly { url: string; model: string; title: string | null; text: string; published_at: string | null; truncated: boolean }[];
  failed: readonly { url: string; error: string }[];
  cost_usd: number;
  truncated: boolean;
}

/** An extract's answer as text an agent reads: one block per page, then the URLs no model could fetch. */
export function fetchText(body: FetchSuccessView): string {
  const count = body.results.length;
  const lines = [`${count} page${count === 1 ? '' : 's'} read (cost ${body.cost_usd} USD, request ${body.request_id})`];
  for (const result of body.results) {
    lines.push('', `## ${result.title ?? result.url}`, result.url);
    lines.push(`(from ${result.model}${result.published_at === null ? '' : `, published ${result.published_at}`}${result.truncated ? ', cut' : ''})`, '', result.text);
  }
  if (body.failed.length > 0) {
    lines.push('', 'Could not be read:');
    for (const failure of body.failed) lines.push(`- ${failure.url}: ${failure.error}`);
  }
  if (body.truncated) lines.push('', '(text cut to max_chars_per_url or max_total_chars)');
  return lines.join('\n');
}

/**
 * A refused or failed tool call: the first text block reads as a sentence with the spec's
 * code and message (and the amount needed, the wait, or the attempts); the second is the
 * platform's error body as JSON, plus `retry_after_seconds` where HTTP would send
 * Retry-After.
 */
export function errorResult(body: ErrorBody, retryAfterSeconds: number | undefined): CallToolResult {
  const { code, message } = body.error;
  const lines = [`Error ${code}: ${message}`];
  if (body.error.needed_usd !== undefined) {
    lines.push(code === 'max_cost_exceeded'
      ? `needed_usd: ${body.error.needed_usd} (the least max_cost_usd that lets one of the requested models run)`
      : `needed_usd: ${body.error.needed_usd} (the least one of the requested models needs)`);
  }
  if (retryAfterSeconds !== undefined) lines.push(`retry after ${retryAfterSeconds} s`);
  if (body.error.attempts !== undefined) {
    lines.push('attempts:');
    for (const attempt of body.error.attempts) lines.push(attemptLine(attempt));
  }
  lines.push(`request ${body.error.request_id}`);
  const json = retryAfterSeconds === undefined ? body : { error: { ...body.error, retry_after_seconds: retryAfterSeconds } };
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }, { type: 'text', text: JSON.stringify(json) }] };
}

interface ModelView {
  id: string;
  kind?: string;
  description: string;
  max_results: number;
  pricing: {
    base_usd: number; included_results: number | null; per_result_usd: number; cache_price_usd: number | null; per_url_usd?: number; url_block?: number;
    metering?: string; unit_usd?: number; max_cost_usd?: number; min_cap_usd?: number;
  };
  available: boolean;
  supported_filters: readonly string[];
  supported_contents?: readonly string[];
  supported_formats?: readonly string[];
  supported_options?: readonly string[];
  status?: string;
}

const RESEARCH_UNIT: Readonly<Record<string, string>> = { per_run: 'per run', usage: 'per USD the provider reports', credits: 'per provider credit' };

/** A research model's line: how it is metered, the most a run costs and the least cap it runs on. */
function researchLine(m: ModelView): string {
  const unit = RESEARCH_UNIT[m.pricing.metering ?? ''] ?? '';
  return `${m.id} (deep_research): ${m.description}; ${String(m.pricing.unit_usd)} USD ${unit}, at most ${String(m.pricing.max_cost_usd)} USD a run; ` +
    `runs on a max_cost_usd of at least ${String(m.pricing.min_cap_usd)} USD.${m.available ? '' : ' Not available on this deployment.'}`;
}

/** The catalog as text: one line per model with its price, cap and filters. */
export function modelsText(models: readonly ModelView[]): string {
  return models
    .map((m) => {
      if (m.kind === 'extract') return extractModelText(m);
      if (m.kind === 'research') return researchLine(m);
      const extra = m.pricing.included_results === null || m.pricing.per_result_usd === 0
        ? ''
        : `, +${m.pricing.per_result_usd} USD per result after ${m.pricing.included_results}`;
      const cached = m.pricing.cache_price_usd === null ? '' : ` A repeated search answered from the cache: ${m.pricing.cache_price_usd} USD.`;
      const filters = m.supported_filters.length === 0 ? 'no filters' : `filters: ${m.supported_filters.join(', ')}`;
      return `${m.id}: ${m.description}; up to ${m.max_results} results, ${m.pricing.base_usd} USD per search${extra}; ${filters}.${cached}${m.available ? '' : ' Not available on this deployment.'}${m.available && m.status !== undefined && m.status !== 'operational' ? ` Now ${m.status}.` : ''}`;
    })
    .join('\n');
}

/** An extract model as text: its price per URL and what it honours. */
function extractModelText(m: ModelView): string {
  const block = m.pricing.url_block !== undefined && m.pricing.url_block > 1 ? `, charged in blocks of ${m.pricing.url_block} URLs per call` : '';
  const cached = m.pricing.cache_price_usd === null ? '' : ` A page read from the cache: ${m.pricing.cache_price_usd} USD.`;
  const honours = [`formats: ${(m.supported_formats ?? []).join(', ')}`, ...(m.supported_options ?? []).length > 0 ? [`options: ${(m.supported_options ?? []).join(', ')}`] : []].join('; ');
  return `${m.id} (web_fetch): ${m.description}; up to ${m.max_results} URLs, ${m.pricing.per_url_usd ?? 0} USD per URL that comes back${block}; ${honours}.${cached}${m.available ? '' : ' Not available on this deployment.'}`;
}

export interface CreditsView {
  balance_usd: number;
  reserved_usd: number;
  total_purchased_usd: number;
  total_spent_usd: number;
}

export function creditsText(credits: CreditsView): string {
  return `Balance ${credits.balance_usd} USD (held by searches in flight: ${credits.reserved_usd} USD). Bought ${credits.total_purchased_usd} USD, spent ${credits.total_spent_usd} USD in all.`;
}
