import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PUBLIC_ROUTE_CONFIG } from '@svc/http-edge';

/**
 * GET /v1/openapi.json: the OpenAPI 3.1 document of the public edge, generated from the
 * code and committed beside this service (openapi.json; `npm run generate:openapi`).
 * GET /docs: an API reference page rendering it with Swagger UI, whose files are served
 * from the swagger-ui-dist package (nothing is fetched from elsewhere).
 */

const DOCUMENT_PATH = join(__dirname, '..', '..', 'openapi.json');

/** Swagger UI's own files, by the name the page asks for. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    tryItOutEnabled: false,
    validatorUrl: null,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Search gateway API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** Only this origin's files; Swagger UI sets inline styles and shows data: images. */
const PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; form-action 'none'; frame-ancestors 'none'";

export function registerOpenApiRoutes(scope: FastifyInstance): void {
  const document = readFileSync(DOCUMENT_PATH, 'utf8');
  const uiRoot = dirname(require.resolve('swagger-ui-dist/package.json'));
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of Object.entries(ASSETS)) assets.set(name, { body: readFileSync(join(uiRoot, name)), type });
  assets.set('init.js', { body: Buffer.from(INIT_JS), type: 'text/javascript; charset=utf-8' });

  scope.get('/v1/openapi.json', { config: PUBLIC_ROUTE_CONFIG }, (_request, reply) => {
    void reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(document);
  });
  scope.get('/docs', { config: PUBLIC_ROUTE_CONFIG }, (_request, reply) => {
    void reply.type('text/html; charset=utf-8').header('content-security-policy', PAGE_POLICY).header('cache-control', 'no-cache').send(PAGE);
  });
  for (const [name, asset] of assets) {
    scope.get(`/docs/${name}`, { config: PUBLIC_ROUTE_CONFIG }, (_request, reply) => {
      void reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
    });
  }
}
