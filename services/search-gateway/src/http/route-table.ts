/**
 * Every (method, path pattern) the gateway serves, collected from Fastify's onRoute hook,
 * so an unmatched request can be told apart: a known path with another method (405 with
 * Allow) or an unknown path (404).
 */
export class RouteTable {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];
  private readonly byUrl = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  add(methods: string | readonly string[], url: string): void {
    let route = this.byUrl.get(url);
    if (route === undefined) {
      route = { pattern: compile(url), methods: new Set() };
      this.byUrl.set(url, route);
      this.routes.push(route);
    }
    for (const method of typeof methods === 'string' ? [methods] : methods) route.methods.add(method.toUpperCase());
  }

  /** The methods allowed on a concrete path, sorted; empty when no route has this path. */
  allowed(path: string): string[] {
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
  return new RegExp(`^${source}$`);
}
