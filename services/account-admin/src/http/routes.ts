/**
 * Every path this service serves and its methods: what tells a 405 (known path, wrong
 * method) from a 404. Kept beside the controllers; a test checks each route answers.
 */
export const ROUTES: ReadonlyArray<{ pattern: RegExp; methods: readonly string[] }> = [
  { pattern: /^\/healthz$/, methods: ['GET'] },
  { pattern: /^\/readyz$/, methods: ['GET'] },
  { pattern: /^\/dashboard$/, methods: ['GET'] },
  { pattern: /^\/dashboard\/api\/(signup|login|logout)$/, methods: ['POST'] },
  { pattern: /^\/dashboard\/api\/me$/, methods: ['GET'] },
  { pattern: /^\/dashboard\/api\/management-keys$/, methods: ['GET', 'POST'] },
  { pattern: /^\/dashboard\/api\/management-keys\/[^/]+$/, methods: ['DELETE'] },
  { pattern: /^\/v1\/keys$/, methods: ['GET', 'POST'] },
  { pattern: /^\/v1\/keys\/[^/]+$/, methods: ['GET', 'PATCH', 'DELETE'] },
  { pattern: /^\/v1\/key$/, methods: ['GET'] },
];

/** The methods allowed on a known path (HEAD with GET), or null for an unknown path. */
export function allowedMethods(path: string): string[] | null {
  const route = ROUTES.find((r) => r.pattern.test(path));
  if (route === undefined) return null;
  return route.methods.includes('GET') ? [...route.methods, 'HEAD'] : [...route.methods];
}
