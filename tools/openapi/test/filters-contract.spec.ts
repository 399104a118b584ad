import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATALOG, FILTER_NAMES, FILTER_SCHEMAS } from '@svc/contracts';
import { repoRoot } from '@svc/test-kit';
import { FILTER_NAMES as SDK_FILTER_NAMES } from '../../../packages/sdk/src/types';
import { FILTER_FLAGS } from '../../../packages/sdk/src/cli/main';
import { SEARCH_BODY_SCHEMA, WEB_SEARCH_INPUT_SCHEMA } from '@svc/search-gateway';

/**
 * The search filters are declared once (packages/contracts FILTER_NAMES and FILTER_SCHEMAS);
 * every other place that states them is checked against that declaration here.
 */
type Json = Record<string, unknown>;
const withoutDescription = (schema: unknown): Json => {
  const { description: _description, ...rules } = schema as Json;
  return rules;
};

describe('the search filters, declared once', () => {
  it('the route schema of POST /v1/search takes exactly the declared rules', () => {
    for (const name of FILTER_NAMES) expect(SEARCH_BODY_SCHEMA.properties[name]).toBe(FILTER_SCHEMAS[name]);
  });

  it('the OpenAPI document states the same rules for every filter of SearchBody', () => {
    const document = JSON.parse(readFileSync(join(repoRoot(), 'services/search-gateway/openapi.json'), 'utf8')) as { components: { schemas: Record<string, { properties: Json }> } };
    const body = document.components.schemas.SearchBody as { properties: Json };
    for (const name of FILTER_NAMES) expect(withoutDescription(body.properties[name])).toEqual(JSON.parse(JSON.stringify(FILTER_SCHEMAS[name])));
    expect((document.components.schemas.FilterName as unknown as { enum: string[] }).enum).toEqual([...FILTER_NAMES]);
  });

  it('the MCP web_search input schema has every filter with the declared rules and a description', () => {
    const properties = WEB_SEARCH_INPUT_SCHEMA.properties as Record<string, Json>;
    for (const name of FILTER_NAMES) {
      expect(withoutDescription(properties[name])).toEqual(FILTER_SCHEMAS[name]);
      expect(typeof properties[name]?.description).toBe('string');
    }
  });

  it('the SDK names the same filters, and the CLI has one flag per filter', () => {
    expect([...SDK_FILTER_NAMES]).toEqual([...FILTER_NAMES]);
    expect(Object.keys(FILTER_FLAGS)).toEqual(FILTER_NAMES.map((name) => name.replace(/_/g, '-')));
  });

  it('every model names only declared filters', () => {
    for (const model of CATALOG) for (const name of model.supportedFilters) expect(FILTER_NAMES).toContain(name);
  });
});
