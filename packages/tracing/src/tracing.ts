import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { SpanExporter } from '@opentelemetry/sdk-trace';

export interface Tracing {
  /** Sends the spans still buffered and stops (call at shutdown). */
  shutdown(): Promise<void>;
}

let active: { tracer: Tracer; provider: TracerProvider } | null = null;

/**
 * Turns tracing on for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set (spans go to
 * `<endpoint>/v1/traces`, OTLP over HTTP), or with the exporter given (tests). Otherwise it
 * does nothing and returns null: no tracer, no context manager, no propagator, so every
 * helper here is a cheap no-op and no header is read or written.
 */
export function startTracing(service: string, env: NodeJS.ProcessEnv = process.env, exporter?: SpanExporter): Tracing | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (exporter === undefined && (endpoint === undefined || endpoint === '')) return null;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new BatchSpanProcessor({ exporter: exporter ?? new OTLPTraceExporter(), scheduledDelayMillis: 500 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  active = { tracer: provider.getTracer(service), provider };
  return {
    shutdown: async () => {
      await provider.shutdown();
      active = null;
    },
  };
}

export function tracingActive(): boolean {
  return active !== null;
}

/** The process's tracer, or null when tracing is off. */
export function tracer(): Tracer | null {
  return active?.tracer ?? null;
}

const headerSetter = {
  set(carrier: Record<string, unknown>, key: string, value: string): void {
    carrier[key] = value;
  },
};

/**
 * Sets `traceparent` (and `tracestate`) of the active span on outgoing headers, replacing
 * the caller's; nothing when tracing is off.
 */
export function injectTraceHeaders(headers: Record<string, unknown>): void {
  if (active === null) return;
  propagation.inject(context.active(), headers, headerSetter);
}

/** The active span's `traceparent`, or undefined (tracing off, or no span). */
export function currentTraceparent(): string | undefined {
  if (active === null) return undefined;
  const carrier: Record<string, unknown> = {};
  propagation.inject(context.active(), carrier, headerSetter);
  return typeof carrier.traceparent === 'string' ? carrier.traceparent : undefined;
}

/** The context a `traceparent` value names (the root context when it is missing or malformed). */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  if (active === null || traceparent === undefined) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent }, { get: (carrier, key) => carrier[key as 'traceparent'], keys: () => ['traceparent'] });
}

/** Runs `work` in a span (child of `parent`, else of the active context); without tracing, just runs it. */
export async function withSpan<T>(name: string, kind: 'server' | 'internal' | 'client', parent: Context | undefined, work: () => Promise<T>): Promise<T> {
  const t = active?.tracer;
  if (t === undefined) return work();
  const span: Span = t.startSpan(name, { kind: kind === 'server' ? SpanKind.SERVER : kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL }, parent ?? context.active());
  try {
    return await context.with(trace.setSpan(parent ?? context.active(), span), work);
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
    throw error;
  } finally {
    span.end();
  }
}
