import type { SearchContents, SearchFilters } from '@svc/contracts';
import { filterInstantIso } from './filter-params';
import { HttpSearchAdapter, postJson, resultsField } from './http-search-adapter';
import type { AdapterSettings, ProviderApi } from './http-search-adapter';
import { HttpExtractAdapter, pagesByUrl } from './http-extract-adapter';
import type { ExtractApi } from './http-extract-adapter';
import { genericFailure, isRecord } from './provider-http';
import { plainText } from './result-fields';
import { failure } from './search-provider';
import type { ProviderFailure } from './search-provider';

export const EXA_PRODUCTION_BASE_URL = 'https://api.exa.ai';

/** Exa's search types, as its official client (exa-js 2.23) types them. */
const EXA_TYPES = ['keyword', 'neural', 'auto', 'hybrid', 'fast', 'instant', 'deep-lite', 'deep', 'deep-reasoning'];
/** A text snippet, when Exa sends `text` and no highlight, is cut to this many characters. */
const MAX_TEXT_SNIPPET = 500;

export function classifyExaError(status: number): ProviderFailure {
  if (status === 401) return failure('bad_key', 'provider rejected the key (401)', status);
  if (status === 402) return failure('quota', 'provider credits exhausted (402)', status);
  return genericFailure(status);
}

/** The filters as Exa's own fields (docs/providers.md, "Filters"). */
export function exaFilterFields(filters: SearchFilters): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (filters.include_domains !== undefined) fields.includeDomains = filters.include_domains;
  if (filters.exclude_domains !== undefined) fields.excludeDomains = filters.exclude_domains;
  if (filters.country !== undefined) fields.userLocation = filters.country;
  if (filters.published_after !== undefined) fields.startPublishedDate = filterInstantIso(filters.published_after, 'start');
  if (filters.published_before !== undefined) fields.endPublishedDate = filterInstantIso(filters.published_before, 'end');
  return fields;
}

/**
 * What Exa's `/search` is asked to return in each result (`contents`): its highlights always
 * (the snippet is the first), and for contents `text` the page's text cut at the cap; for
 * `highlights`, highlights cut at the cap. Both are included in Exa's search price.
 */
export function exaSearchContents(contents: SearchContents | undefined, maxChars: number | undefined): Record<string, unknown> {
  switch (contents) {
    case undefined:
    case 'none':
      return SNIPPET_ONLY;
    case 'text':
      return { text: { maxCharacters: maxChars }, highlights: true };
    case 'highlights':
      return { highlights: { maxCharacters: maxChars } };
  }
}

/** A search's contents without page text: the highlights its snippet comes from (one object for every search). */
const SNIPPET_ONLY: Record<string, unknown> = Object.freeze({ highlights: true });

function stringsOf(value: unknown): readonly string[] | null {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : null;
}

function snippetOf(item: Record<string, unknown>): string {
  if (Array.isArray(item.highlights)) {
    const first: unknown = item.highlights.find((highlight) => typeof highlight === 'string' && highlight.trim() !== '');
    if (typeof first === 'string') return plainText(first);
  }
  return plainText(item.text).slice(0, MAX_TEXT_SNIPPET);
}

const EXA_API: ProviderApi = {
  provider: 'exa',
  productionBaseUrl: EXA_PRODUCTION_BASE_URL,
  upstreamVariants: EXA_TYPES,
  request: (search, cap) => postJson('/search', { 'x-api-key': search.apiKey }, {
    query: search.query,
    type: search.model.upstreamVariant,
    numResults: cap,
    contents: exaSearchContents(search.contents, search.maxCharsPerResult),
    ...(search.filters === undefined ? {} : exaFilterFields(search.filters)),
  }),
  classify: classifyExaError,
  itemsOf: resultsField,
  fields: {
    snippet: snippetOf, publishedAt: 'publishedDate', score: 'score',
    text: (item) => (typeof item.text === 'string' ? item.text : null),
    highlights: (item) => stringsOf(item.highlights),
  },
};

/** Exa: `POST /search` with `type` = the model's upstream variant and highlights as snippets. */
export class ExaAdapter extends HttpSearchAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(EXA_API, settings);
  }
}

/**
 * Exa's `POST /contents` (exa-js getContents: `{urls, ...options}`): the page's `text` cut at
 * the cap, or, with a query, its `highlights` for the query (the text trimmed by relevance),
 * never both (Exa bills each content type per page). `maxAgeHours` from max_age_s, rounded down
 * to whole hours (0: crawled live), so no page older than asked is accepted. A URL Exa cannot
 * fetch is an `error` in its `statuses`, not a failure of the call.
 */
const EXA_CONTENTS_API: ExtractApi = {
  provider: 'exa',
  productionBaseUrl: EXA_PRODUCTION_BASE_URL,
  upstreamVariants: ['contents'],
  request: (extract) => postJson('/contents', { 'x-api-key': extract.apiKey }, {
    urls: extract.urls,
    ...(extract.query === null
      ? { text: { maxCharacters: extract.maxCharsPerUrl } }
      : { highlights: { query: extract.query, maxCharacters: extract.maxCharsPerUrl } }),
    ...(extract.maxAgeS === null ? {} : { maxAgeHours: Math.floor(extract.maxAgeS / 3_600) }),
  }),
  classify: classifyExaError,
  read(body, extract) {
    if (!isRecord(body) || !Array.isArray(body.results)) return null;
    const failures = new Map<string, string>();
    if (Array.isArray(body.statuses)) {
      for (const status of body.statuses) {
        if (!isRecord(status) || status.status !== 'error' || typeof status.id !== 'string') continue;
        const error = isRecord(status.error) ? status.error : {};
        failures.set(status.id, exaFetchError(error.tag, error.httpStatusCode));
      }
    }
    return pagesByUrl(extract, body.results, (item) => ({
      url: typeof item.id === 'string' ? item.id : item.url,
      title: item.title,
      text: extract.query === null ? item.text : (stringsOf(item.highlights) ?? []).join('\n\n'),
      published: item.publishedDate,
    }), (url) => failures.get(url));
  },
};

/** A URL's failure in Exa's statuses, in the platform's words (its tag and the page's HTTP status, never Exa's text). */
function exaFetchError(tag: unknown, status: unknown): string {
  const page = typeof status === 'number' ? ` (${status})` : '';
  switch (tag) {
    case 'CRAWL_NOT_FOUND':
      return `page not found${page}`;
    case 'CRAWL_TIMEOUT':
      return `page did not load in time${page}`;
    case 'SOURCE_NOT_AVAILABLE':
      return `page not available${page}`;
    default:
      return `page could not be fetched${page}`;
  }
}

/** Exa contents: `POST /contents`. */
export class ExaContentsAdapter extends HttpExtractAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(EXA_CONTENTS_API, settings);
  }
}
