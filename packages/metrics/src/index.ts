export { createRegistry, LATENCY_BUCKETS_S, Counter, Gauge, Histogram, Registry } from './registry';
export { HttpMetrics, routeLabel } from './http-metrics';
export { GrpcServerMetrics } from './grpc-metrics';
export { startMetricsServer } from './metrics-server';
export type { MetricsServer, MetricsServerOptions } from './metrics-server';
export { parsePrometheusText, sampleValue, sumSamples } from './text';
export type { Sample } from './text';
export { HotCounter, HotCounterChild, HotHistogram, HotHistogramChild } from './hot';
export type { HotMetricConfig, HotHistogramConfig } from './hot';
