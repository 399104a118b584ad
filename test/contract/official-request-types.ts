/**
 * The request types of the providers' own client libraries, as the contract suite turns
 * them into JSON Schema (ts-json-schema-generator). Nothing here is written by us but the
 * names: each type is the official client's own.
 *
 * - Exa: exa-js `search(query, options)` sends `{ query, ...options }` as the JSON body.
 * - Tavily: @tavily/core `search(query, options)` sends the options renamed to snake_case
 *   (searchDepth → search_depth, ...) as the JSON body.
 * - Brave: brave-search `webSearch(q, options)` / `newsSearch(q, options)` send `q` and the
 *   options as the query string of GET /web/search and /news/search.
 * - Exa contents: exa-js `getContents(urls, options)` sends `{ urls, ...options }` to POST /contents.
 * - Tavily extract: @tavily/core `extract(urls, options)` sends `urls` and the options renamed to
 *   snake_case to POST /extract.
 */
import type { ContentsOptions, CreateAgentRunParams, RegularSearchOptions } from 'exa-js';
import type { TavilyExtractOptions, TavilyResearchOptions, TavilySearchOptions } from '@tavily/core';
import type { BraveSearchOptions, NewsSearchOptions } from 'brave-search/dist/types';

export type ExaSearchBody = RegularSearchOptions & { query: string };
export type TavilyOptions = TavilySearchOptions;
export type BraveWebQuery = BraveSearchOptions & { q: string };
export type BraveNewsQuery = NewsSearchOptions & { q: string };
export type ExaContentsBody = ContentsOptions & { urls: string[] };
export type TavilyExtractOptionsType = TavilyExtractOptions;

/**
 * Research runs (docs/decisions/0062):
 * - Exa: exa-js `agent.runs.create(params)` sends the params (less `stream`) as the JSON body of POST /agent/runs.
 * - Tavily: @tavily/core `research(input, options)` sends `input` and the options renamed to snake_case
 *   (outputSchema → output_schema, citationFormat → citation_format) as the JSON body of POST /research.
 */
export type ExaAgentRunBody = CreateAgentRunParams;
export type TavilyResearchOptionsType = TavilyResearchOptions;
