/**
 * The routes a listener serves, recorded from Fastify's onRoute hook, so an unmatched
 * request can be told apart: a known path with another method is 405, else 404.
 */
export class RouteTable {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  add(url: string, methods: string | string[]): void {
    const source = url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    const existing = this.routes.find((route) => route.pattern.source === pattern.source);
    const list = Array.isArray(methods) ? methods : [methods];
    if (existing !== undefined) list.forEach((method) => existing.methods.add(method.toUpperCase()));
    else this.routes.push({ pattern, methods: new Set(list.map((method) => method.toUpperCase())) });
  }

  /** Methods served on this path (query string ignored); empty when the path is unknown. */
  allowedMethods(url: string): string[] {
    const path = url.split('?')[0] ?? url;
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(path)) route.methods.forEach((method) => methods.add(method));
    }
    return [...methods].sort();
  }
}
