/**
 * Every (method, path pattern) a listener serves, collected from Fastify's onRoute hook, so
 * an unmatched request can be told apart: a known path with another method is 405 (with
 * Allow), anything else 404.
 */
export class RouteTable {
  private readonly routes: { url: string; pattern: RegExp; methods: Set<string> }[] = [];

  add(methods: string | readonly string[], url: string): void {
    let route = this.routes.find((r) => r.url === url);
    if (route === undefined) {
      route = { url, pattern: compile(url), methods: new Set() };
      this.routes.push(route);
    }
    for (const method of typeof methods === 'string' ? [methods] : methods) route.methods.add(method.toUpperCase());
  }

  /** The methods allowed on a concrete path (query string ignored), sorted; empty when unknown. */
  allowed(url: string): string[] {
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}

function compile(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}/?$`);
}
