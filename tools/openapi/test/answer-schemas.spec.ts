import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { ANSWER_SCHEMAS, API_KEY_FIELDS } from '@svc/contracts';
import type { AnswerSchemaName } from '@svc/contracts';
import { GET_CREDITS_OUTPUT_SCHEMA, LIST_MODELS_OUTPUT_SCHEMA, WEB_FETCH_OUTPUT_SCHEMA, WEB_SEARCH_OUTPUT_SCHEMA } from '@svc/search-gateway';
import { repoRoot } from '@svc/test-kit';
import { componentSchemas } from '../src/schemas';
import { shapeOf, shapeProblems } from '../src/shapes';
import type { Shape, SideNames } from '../src/shapes';

/**
 * The answers written once in @svc/contracts (answers.ts) against every copy of them: the
 * OpenAPI document (committed and as built), the MCP tool web_search's output schema, the
 * SDK's types (and so the dashboard, which takes them), and the TypeScript types the services
 * answer with. "The same" is exact here: the same fields, required fields, types and values,
 * and `integer` is not `number` (the SDK says `Integer`); the SDK alone may accept any string
 * where the source lists values (a model id). Only the services' own types are
 * compared with integer read as number, since a service's TypeScript type cannot say
 * integer; what they send is checked as JSON by the end-to-end contract test.
 */
type Json = Record<string, unknown>;

const root = repoRoot();
const SOURCE_ROOT: Json = { components: { schemas: ANSWER_SCHEMAS } };
const NAMES = Object.keys(ANSWER_SCHEMAS) as AnswerSchemaName[];
const source = (name: AnswerSchemaName): Shape => shapeOf({ $ref: `#/components/schemas/${name}` }, SOURCE_ROOT);
const compare = (copy: Shape, original: Shape, copyName: string, mode: 'exact' | 'exact-types' = 'exact'): string[] =>
  shapeProblems(copy, original, mode, '$', { client: copyName, server: 'source' } satisfies SideNames);

/** A TypeScript type of a file as JSON Schema (the SDK's `Integer` reads as integer). */
function typeSchema(file: string, tsconfig: string, type: string): Shape {
  const generator = createGenerator({ path: join(root, file), tsconfig: join(root, tsconfig), skipTypeCheck: true, expose: 'all', topRef: true, jsDoc: 'extended', additionalProperties: false, type });
  const schema = generator.createSchema(type) as Json;
  return shapeOf(schema, schema);
}

/** The shape with every integer read as a number (for TypeScript types, which have no integer). */
function integersAsNumbers(shape: Shape): Shape {
  switch (shape.kind) {
    case 'object':
      return { ...shape, props: Object.fromEntries(Object.entries(shape.props).map(([name, prop]) => [name, integersAsNumbers(prop)])) };
    case 'array':
      return { kind: 'array', items: integersAsNumbers(shape.items) };
    case 'union':
      return { kind: 'union', variants: shape.variants.map(integersAsNumbers) };
    case 'scalar':
      return { ...shape, types: [...new Set(shape.types.map((t) => (t === 'integer' ? 'number' : t)))].sort() };
    default: {
      const unreachable: never = shape;
      return unreachable;
    }
  }
}

describe('each answer is written once (@svc/contracts) and every copy matches it', () => {
  const committed = JSON.parse(readFileSync(join(root, 'services/search-gateway/openapi.json'), 'utf8')) as Json;
  const built: Json = { components: { schemas: componentSchemas() } };

  it.each(NAMES)('the OpenAPI document\'s %s is the source (committed and as built)', (name) => {
    const at = { $ref: `#/components/schemas/${name}` };
    expect(compare(shapeOf(at, committed), source(name), 'committed document')).toEqual([]);
    expect(compare(shapeOf(at, built), source(name), 'built document')).toEqual([]);
  });

  it.each(['ApiKeyResponse', 'CreatedApiKey', 'ApiKeyInfo'])('the document\'s %s carries every field of the API key record as the source has it', (name) => {
    const answer = shapeOf({ $ref: `#/components/schemas/${name}` }, committed);
    if (answer.kind !== 'object') throw new Error(`${name} is not an object`);
    const record = source('ApiKey') as Extract<Shape, { kind: 'object' }>;
    const problems = Object.keys(API_KEY_FIELDS).flatMap((field) => {
      const mine = answer.props[field];
      const theirs = record.props[field];
      if (mine === undefined || theirs === undefined) return [`${field}: missing`];
      return [...compare(mine, theirs, name).map((p) => `${field}${p.slice(1)}`), ...(answer.required.includes(field) === record.required.includes(field) ? [] : [`${field}: required differs`])];
    });
    expect(problems).toEqual([]);
  });

  it.each([
    ['web_search', WEB_SEARCH_OUTPUT_SCHEMA, 'SearchAnswer'],
    ['web_fetch', WEB_FETCH_OUTPUT_SCHEMA, 'ExtractResponse'],
    ['list_models', LIST_MODELS_OUTPUT_SCHEMA, 'ModelList'],
    ['get_credits', GET_CREDITS_OUTPUT_SCHEMA, 'Credits'],
  ] as const)('the MCP tool %s\'s output schema is the source\'s %s', (_tool, schema, name) => {
    const mcp = schema as Json;
    expect(JSON.stringify(mcp)).not.toContain('$ref');
    expect(compare(shapeOf(mcp, mcp), source(name), 'MCP output schema')).toEqual([]);
  });

  describe('the SDK (and the dashboard, which takes its types)', () => {
    it.each([
      ['SearchResponse', 'SearchResponse'], ['SearchResult', 'SearchResult'], ['Attempt', 'Attempt'], ['ApiKey', 'ApiKey'], ['UsageRow', 'UsageRow'],
      ['ModelList', 'ModelList'], ['Model', 'Model'], ['ModelPricing', 'ModelPricing'], ['Credits', 'Credits'],
      ['ExtractResponse', 'ExtractResponse'], ['ExtractResult', 'ExtractResult'], ['ExtractAttempt', 'ExtractAttempt'], ['ExtractFailure', 'ExtractFailure'],
      ['FanoutSearchResponse', 'FanoutSearchResponse'], ['FanoutResult', 'FanoutResult'], ['FanoutAttempt', 'FanoutAttempt'], ['FanoutSource', 'FanoutSource'],
      ['SearchAnswer', 'SearchAnswer'], ['SearchStrategy', 'SearchStrategy'],
      ['ResearchRun', 'ResearchRun'], ['ResearchRunSummary', 'ResearchRunSummary'], ['ResearchRunList', 'ResearchRunList'],
      ['ResearchAttempt', 'ResearchAttempt'], ['ResearchSource', 'ResearchSource'],
    ] as const)(
      'the SDK\'s %s is the source\'s %s',
      (sdkType, name) => {
        // The SDK may take any string where the source lists the catalog's model ids.
        expect(compare(typeSchema('packages/sdk/src/types.ts', 'packages/sdk/tsconfig.json', sdkType), source(name), `SDK ${sdkType}`, 'exact-types')).toEqual([]);
      },
    );

    it('the dashboard restates none of them: web/api.ts re-exports the SDK\'s', () => {
      const api = readFileSync(join(root, 'services/account-admin/web/src/api.ts'), 'utf8');
      for (const type of ['ApiKey', 'UsageRow', 'ServiceStatus', 'HealthWindow']) {
        expect(api).not.toMatch(new RegExp(`(interface|type)\\s+${type}\\b`));
        expect(api).toMatch(new RegExp(`export type \\{[^}]*\\b${type}\\b[^}]*\\} from '@svc/sdk/types'`));
      }
    });
  });

  describe('the services\' answer types (integer read as number)', () => {
    /**
     * Known differences, each a finding to settle, not to hide: the test fails when one is
     * fixed (remove it here) as much as when a new one appears. account-admin answers a key
     * change with usage_usd and usage_total_usd null when Redis could not be read for the
     * key's usage (keys.service.ts); the source, the document and the SDK say number
     * (decision 21).
     */
    const KNOWN: Record<string, string[]> = {
      KeyView: [
        '$.usage_total_usd: types account-admin KeyView [null, number], source [number]',
        '$.usage_usd: types account-admin KeyView [null, number], source [number]',
      ],
      UsageRowView: [],
    };

    it.each([
      ['KeyView', 'services/account-admin/src/keys/keys.service.ts', 'tsconfig.json', 'account-admin', 'ApiKey'],
      ['UsageRowView', 'services/billing/src/http/usage/usage.dto.ts', 'tsconfig.json', 'billing', 'UsageRow'],
    ] as const)('%s answers the source\'s shape', (type, file, tsconfig, service, name) => {
      const problems = compare(integersAsNumbers(typeSchema(file, tsconfig, type)), integersAsNumbers(source(name)), `${service} ${type}`);
      expect(problems.sort()).toEqual(KNOWN[type]);
    });
  });
});
