import type { SearchFilters } from '@svc/contracts';
import { filterInstantIso } from './filter-params';
import { HttpSearchAdapter, postJson, resultsField } from './http-search-adapter';
import type { AdapterSettings, ProviderApi } from './http-search-adapter';
import { genericFailure } from './provider-http';
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
    contents: { highlights: true },
    ...(search.filters === undefined ? {} : exaFilterFields(search.filters)),
  }),
  classify: classifyExaError,
  itemsOf: resultsField,
  fields: { snippet: snippetOf, publishedAt: 'publishedDate', score: 'score' },
};

/** Exa: `POST /search` with `type` = the model's upstream variant and highlights as snippets. */
export class ExaAdapter extends HttpSearchAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(EXA_API, settings);
  }
}
