import { HotCounter, HotHistogram } from './hot';
import type { HotCounterChild, HotHistogramChild } from './hot';
import type { Registry } from 'prom-client';
import { LATENCY_BUCKETS_S } from './registry';

// OTHER: every method not listed (the label set stays bounded whatever a client sends).
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER']);

/**
 * The route label: the route pattern (`/v1/keys/:id`, never the path with its ids), or
 * `unmatched` for a request no route matched (404/405): a path is unbounded, a pattern is not.
 */
export function routeLabel(route: string | null): string {
  return route ?? 'unmatched';
}

interface Children {
  readonly count: HotCounterChild<'method' | 'route' | 'status'>;
  readonly duration: HotHistogramChild<'method' | 'route' | 'status'>;
}

/**
 * http_requests_total{method,route,status} and http_request_duration_seconds{method,route,status}.
 * Label children are made once per (method, route, status) and kept, so an observation is
 * three map lookups and a few additions: no label object, string or hash per request
 * (hot metrics, docs/decisions/0019-hot-path-metrics.md).
 */
export class HttpMetrics {
  private readonly requests: HotCounter<'method' | 'route' | 'status'>;
  private readonly duration: HotHistogram<'method' | 'route' | 'status'>;
  private readonly children = new Map<string, Map<string | null, Map<number, Children>>>();

  constructor(registry: Registry) {
    this.requests = new HotCounter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.duration = new HotHistogram({
      name: 'http_request_duration_seconds',
      help: 'Time from a request\'s arrival to its reply, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS_S,
      registers: [registry],
    });
  }

  /** One answered request (called from the edge's onResponse, after the reply was written). */
  observe(method: string, route: string | null, status: number, durationMs: number): void {
    let byRoute = this.children.get(method);
    if (byRoute === undefined) {
      // An unknown method can only reach an unmatched route; it is counted as OTHER.
      const known = KNOWN_METHODS.has(method);
      if (!known) {
        this.observe('OTHER', null, status, durationMs);
        return;
      }
      byRoute = new Map();
      this.children.set(method, byRoute);
    }
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      byRoute.set(route, byStatus);
    }
    let children = byStatus.get(status);
    if (children === undefined) {
      const labels = [method, routeLabel(route), String(status)] as const;
      children = { count: this.requests.child(...labels), duration: this.duration.child(...labels) };
      byStatus.set(status, children);
    }
    children.count.inc();
    children.duration.observe(durationMs / 1000);
  }
}
