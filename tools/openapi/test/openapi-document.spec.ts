import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { repoRoot } from '@svc/test-kit';
import { FORWARD_ROUTES } from '@svc/search-gateway';
import { buildOpenApiDocument, DTO_MODELS } from '../src/document';
import { OPERATIONS } from '../src/operations';

/**
 * The committed document (services/search-gateway/openapi.json, served by the gateway) is
 * what the code generates. Regenerate it with `npm run generate:openapi`.
 */
const COMMITTED = join(repoRoot(), 'services/search-gateway/openapi.json');

/** DTO files of the operator API, which is internal and not in the document. */
const INTERNAL_DTO_FILES = ['services/billing/src/http/operator/operator.dto.ts', 'services/billing/src/http/finance/finance.dto.ts', 'services/billing/src/http/finance/reconciliation.dto.ts'];
/** DTO classes that are only bases of documented ones (DayRangeQueryDto is documented itself: the dashboard's daily-by-model query). */
const BASE_DTOS: readonly string[] = [];

function sourceFiles(dir: string, suffix: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path, suffix);
    return name.endsWith(suffix) ? [path] : [];
  });
}

/** A route pattern of the gateway's forward table as a regular expression (`:x` one segment, `*` the rest). */
const forwardPattern = (url: string): RegExp =>
  new RegExp(`^${url.split('/').map((part) => (part === '*' ? '.+' : part.startsWith(':') ? '[^/]+' : part)).join('/')}$`);

/** Every route of the control plane's Nest controllers, as `METHOD /path/{param}`. */
async function controllerRoutes(): Promise<string[]> {
  const routes: string[] = [];
  for (const file of [...sourceFiles(join(repoRoot(), 'services/account-admin/src'), '.controller.ts'), ...sourceFiles(join(repoRoot(), 'services/billing/src'), '.controller.ts')]) {
    const module = (await import(file)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value !== 'function') continue;
      const prefix: unknown = Reflect.getMetadata(PATH_METADATA, value);
      if (typeof prefix !== 'string') continue;
      const prototype = (value as { prototype: Record<string, unknown> }).prototype;
      for (const key of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[key];
        if (typeof handler !== 'function' || key === 'constructor') continue;
        const paths: unknown = Reflect.getMetadata(PATH_METADATA, handler);
        const method: unknown = Reflect.getMetadata(METHOD_METADATA, handler);
        if (typeof method !== 'number') continue;
        // A handler may serve several paths (@Get(['', 'keys', ...])).
        const list = typeof paths === 'string' ? [paths] : Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
        for (const path of list) {
          const full = `/${[prefix, path].map((part) => part.replace(/^\/+|\/+$/g, '')).filter((part) => part !== '').join('/')}`;
          routes.push(`${RequestMethod[method] ?? String(method)} ${full.replace(/:([a-z_]+)/gi, '{$1}')}`);
        }
      }
    }
  }
  return routes;
}

/** The control-plane routes the document describes, as `METHOD /path` (an operation's `routes` when its path is not the route itself). */
const documentedRoutes = (): string[] =>
  OPERATIONS.filter((op) => op.servedBy !== 'search-gateway').flatMap((op) => (op.routes ?? [op.path]).map((path) => `${op.method.toUpperCase()} ${path}`));

const validatedFields = (target: new () => object): string[] =>
  [...new Set(getMetadataStorage().getTargetValidationMetadatas(target, '', true, false).map((m) => m.propertyName))].sort();

describe('the OpenAPI document', () => {
  let built: Record<string, unknown>;
  beforeAll(async () => {
    built = await buildOpenApiDocument();
    if (process.env.OPENAPI_WRITE === '1') writeFileSync(COMMITTED, `${JSON.stringify(built, null, 2)}\n`);
  });

  it('is the committed file (else run npm run generate:openapi)', () => {
    const committed: unknown = JSON.parse(readFileSync(COMMITTED, 'utf8'));
    expect(committed).toEqual(built);
  });

  it('passes an OpenAPI 3.1 validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(built);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('takes request bodies from the DTOs and the gateway schema', () => {
    const schemas = (built.components as { schemas: Record<string, { properties?: Record<string, unknown>; additionalProperties?: unknown }> }).schemas;
    expect(schemas.KeyBody?.properties?.limit_usd).toEqual(expect.objectContaining({ type: ['number', 'null'], maximum: 1_000_000_000 }));
    expect(schemas.CheckoutBody?.properties?.amount_usd).toEqual(expect.objectContaining({ minimum: 5, maximum: 10_000 }));
    expect(schemas.SearchBody?.additionalProperties).toBe(false);
    expect(schemas.UsageQuery?.properties?.group_by).toEqual(expect.objectContaining({ enum: ['day', 'model', 'key', 'kind'] }));
    expect(schemas.ExtractBody?.additionalProperties).toBe(false);
  });

  it('has every public class-validator DTO of the services, with the same fields', async () => {
    const documented = new Set<unknown>(Object.values(DTO_MODELS));
    const undocumented: string[] = [];
    for (const file of sourceFiles(join(repoRoot(), 'services'), '.dto.ts')) {
      const name = relative(repoRoot(), file);
      if (INTERNAL_DTO_FILES.includes(name)) continue;
      const module = (await import(file)) as Record<string, unknown>;
      for (const [exported, value] of Object.entries(module)) {
        if (typeof value !== 'function' || BASE_DTOS.includes(exported) || documented.has(value)) continue;
        if (validatedFields(value as new () => object).length > 0) undocumented.push(`${name}: ${exported} (add @ApiProperty decorators and list it in DTO_MODELS, tools/openapi/src/document.ts)`);
      }
    }
    expect(undocumented).toEqual([]);
    const schemas = (built.components as { schemas: Record<string, { properties?: Record<string, unknown> }> }).schemas;
    for (const [component, model] of Object.entries(DTO_MODELS)) {
      const fields = Object.keys(schemas[component]?.properties ?? {}).sort();
      expect({ component, fields }).toEqual({ component, fields: validatedFields(model) });
    }
  });

  it('documents every control-plane controller route the gateway forwards, and documents no control-plane route that does not exist', async () => {
    const routes = await controllerRoutes();
    expect(routes).toContain('POST /v1/keys');
    const forwarded = (route: string): boolean => {
      const [method = '', path = ''] = route.split(' ');
      return FORWARD_ROUTES.some((r) => r.methods.includes(method as never) && forwardPattern(r.url).test(path.replace(/\{[a-z_]+\}/gi, 'x')));
    };
    expect(routes).toContain('GET /dashboard');
    const documented = documentedRoutes();
    const undocumented = routes.filter((route) => forwarded(route) && !documented.includes(route));
    expect(undocumented).toEqual([]);
    expect(documented.filter((route) => !routes.includes(route))).toEqual([]);
  });

  it('documents every route the gateway forwards, and nothing it does not route', () => {
    const forwarded = new Set<string>();
    for (const route of FORWARD_ROUTES) {
      for (const method of route.methods) forwarded.add(`${method} ${route.url.replace(/:([a-z_]+)/g, '{$1}')}`);
    }
    const documented = documentedRoutes();
    for (const route of documented) {
      const [method = '', path = ''] = route.split(' ');
      const routed = FORWARD_ROUTES.some((r) => r.methods.includes(method as never) && forwardPattern(r.url).test(path.replace(/\{[a-z_]+\}/gi, 'x')));
      expect({ route, routed }).toEqual({ route, routed: true });
    }
    for (const route of forwarded) {
      const [method = '', url = ''] = route.split(' ');
      if (url.endsWith('/*')) {
        // A wildcard forward (the dashboard's pages and files, its JSON API) documents the
        // controller routes behind it; the test above requires each of those. Here: it
        // must lead to at least one documented route.
        const pattern = forwardPattern(url);
        const behind = documented.filter((d) => d.startsWith(`${method} `) && pattern.test((d.split(' ')[1] ?? '').replace(/\{[a-z_]+\}/gi, 'x')));
        expect({ route, documentedBehind: behind.length > 0 }).toEqual({ route, documentedBehind: true });
        continue;
      }
      expect({ route, documented: documented.includes(route) }).toEqual({ route, documented: true });
    }
  });
});
