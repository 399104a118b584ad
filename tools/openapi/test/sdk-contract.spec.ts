import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import type { SchemaGenerator } from 'ts-json-schema-generator';
import { repoRoot } from '@svc/test-kit';
import { ENDPOINTS, ERROR_CODES } from '../../../packages/sdk/src/types';
import type { EndpointKey } from '../../../packages/sdk/src/types';
import { shapeOf, shapeProblems } from '../src/shapes';
import type { Shape } from '../src/shapes';

/**
 * The SDK (packages/sdk/src/types.ts) against the committed OpenAPI document: the same
 * operations (method, path, key, success status), and the same shapes: its TypeScript
 * types, turned into JSON Schema by ts-json-schema-generator, have the fields, required
 * fields, types and values of the document's request, query and response schemas.
 */
type Json = Record<string, unknown>;

const root = repoRoot();
const document = JSON.parse(readFileSync(join(root, 'services/search-gateway/openapi.json'), 'utf8')) as Json;
const paths = document.paths as Record<string, Record<string, Json>>;

/** The operations of the SDK's surface: every keyed /v1 operation and the public catalog (not the webhook, dashboard, health or docs). */
const SDK_TAGS = ['catalog', 'search', 'research', 'credits', 'usage', 'keys', 'provider-keys', 'audit'];
const documented = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, op]) => (op.tags as string[]).some((tag) => SDK_TAGS.includes(tag)) && op.operationId !== 'stripeWebhook')
    .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
);

function keyOf(op: Json): EndpointKey {
  const schemes = (op.security as Record<string, string[]>[]).map((requirement) => Object.keys(requirement).join('+')).sort();
  const joined = schemes.join(',');
  if (joined === '') return 'none';
  if (joined === 'apiKey') return 'api';
  if (joined === 'managementKey') return 'management';
  if (joined === 'apiKey,managementKey') return 'either';
  throw new Error(`unexpected security ${joined}`);
}

function successOf(op: Json): [number, Json | undefined] {
  const responses = op.responses as Record<string, Json>;
  const status = Object.keys(responses).map(Number).find((code) => code >= 200 && code < 300);
  if (status === undefined) throw new Error('no success response');
  const content = responses[String(status)]?.content as Record<string, { schema: Json }> | undefined;
  return [status, content?.['application/json']?.schema];
}

describe('the SDK against the OpenAPI document', () => {
  let generator: SchemaGenerator;
  const sdkShape = (type: string): Shape => {
    const schema = generator.createSchema(type) as Json;
    return shapeOf(schema, schema);
  };
  const docShape = (schema: Json): Shape => shapeOf(schema, document);

  beforeAll(() => {
    generator = createGenerator({
      path: join(root, 'packages/sdk/src/types.ts'),
      tsconfig: join(root, 'packages/sdk/tsconfig.json'),
      skipTypeCheck: true,
      expose: 'all',
      topRef: true,
      // extended: reads the SDK's `@asType integer` (its Integer type).
      jsDoc: 'extended',
      additionalProperties: false,
    });
  });

  it('has an endpoint for every documented operation, and no other', () => {
    const fromDocument = documented.map(({ method, path, op }) => `${method} ${path} ${keyOf(op)} ${successOf(op)[0]}`).sort();
    const fromSdk = ENDPOINTS.map((e) => `${e.method} ${e.path} ${e.key} ${e.status}`).sort();
    expect(fromSdk).toEqual(fromDocument);
  });

  it('has the error codes of the document', () => {
    const codes = ((document.components as { schemas: Record<string, { enum: string[] }> }).schemas.ErrorCode?.enum ?? []).slice().sort();
    expect([...ERROR_CODES].sort()).toEqual(codes);
  });

  it('describes the error body as the document does', () => {
    expect(shapeProblems(sdkShape('ErrorResponse'), docShape({ $ref: '#/components/schemas/ErrorResponse' }), 'response')).toEqual([]);
  });

  it.each(ENDPOINTS.map((e) => [`${e.method} ${e.path}`, e] as const))('%s: request, query and response types match the document', (_name, endpoint) => {
    const op = paths[endpoint.path]?.[endpoint.method.toLowerCase()];
    if (op === undefined) throw new Error(`${endpoint.method} ${endpoint.path} is not documented`);
    const problems: string[] = [];
    const [, response] = successOf(op);
    if (response === undefined) problems.push('no JSON success body documented');
    else problems.push(...shapeProblems(sdkShape(endpoint.response), docShape(response), 'response').map((p) => `response ${endpoint.response}${p.slice(1)}`));

    const body = (op.requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content['application/json']?.schema;
    if ((endpoint.request === null) !== (body === undefined)) problems.push(`request body: SDK ${endpoint.request ?? 'none'}, document ${body === undefined ? 'none' : 'one'}`);
    if (endpoint.request !== null && body !== undefined) {
      problems.push(...shapeProblems(sdkShape(endpoint.request), docShape(body), 'request').map((p) => `request ${endpoint.request}${p.slice(1)}`));
    }

    const query = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query');
    if ((endpoint.query === null) !== (query.length === 0)) problems.push(`query: SDK ${endpoint.query ?? 'none'}, document ${query.length} parameters`);
    if (endpoint.query !== null && query.length > 0) {
      const asObject = {
        type: 'object',
        properties: Object.fromEntries(query.map((p) => [p.name, p.schema])),
        required: query.filter((p) => p.required === true).map((p) => p.name),
      };
      problems.push(...shapeProblems(sdkShape(endpoint.query), docShape(asObject), 'request').map((p) => `query ${endpoint.query}${p.slice(1)}`));
    }
    expect(problems).toEqual([]);
  });
});
