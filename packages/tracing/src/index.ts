export { startTracing, tracingActive, currentTraceparent, injectTraceHeaders, contextFromTraceparent, tracer, withSpan } from './tracing';
export type { Tracing } from './tracing';
export { requestTracing } from './request-tracing';
export type { RequestTracing } from './request-tracing';
export { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
export type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
