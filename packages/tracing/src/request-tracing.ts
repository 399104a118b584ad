import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import { tracer } from './tracing';

interface TracedRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly routeOptions: { readonly url?: string };
}

/** The edge's hooks for traces: a SERVER span per request, the request's work run inside it. */
export interface RequestTracing {
  /** From onRequest: starts the span (child of the request's traceparent) and runs the rest of the request in it. */
  enter(request: TracedRequest, next: () => void): void;
  /** From onResponse: ends the request's span with its status. */
  end(request: object, status: number): void;
}

const headerGetter = {
  get(carrier: IncomingHttpHeaders, key: string): string | undefined {
    const value = carrier[key];
    return Array.isArray(value) ? value[0] : value;
  },
  keys(carrier: IncomingHttpHeaders): string[] {
    return Object.keys(carrier);
  },
};

/**
 * Request tracing for an HTTP edge, or undefined when tracing is off (so the edge does no
 * work per request). The span is named `<METHOD> <route pattern>`; a W3C traceparent from the
 * caller is its parent.
 */
export function requestTracing(): RequestTracing | undefined {
  const t = tracer();
  if (t === null) return undefined;
  const spans = new WeakMap<object, Span>();
  return {
    enter(request, next) {
      const parent = propagation.extract(ROOT_CONTEXT, request.headers, headerGetter);
      const route = request.routeOptions.url ?? 'unmatched';
      const span = t.startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route } }, parent);
      spans.set(request, span);
      context.with(trace.setSpan(parent, span), next);
    },
    end(request, status) {
      const span = spans.get(request);
      if (span === undefined) return;
      spans.delete(request);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}
