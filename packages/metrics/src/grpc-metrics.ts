import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { LATENCY_BUCKETS_S } from './registry';

/**
 * grpc_server_handled_total{method,code} and grpc_server_handling_seconds{method}: the calls a
 * gRPC server answered, by method and status code name (OK, NOT_FOUND, INTERNAL, ...).
 */
export class GrpcServerMetrics {
  private readonly handled: Counter<'method' | 'code'>;
  private readonly duration: Histogram<'method'>;

  constructor(registry: Registry) {
    this.handled = new Counter({ name: 'grpc_server_handled_total', help: 'gRPC calls answered, by method and status code', labelNames: ['method', 'code'], registers: [registry] });
    this.duration = new Histogram({ name: 'grpc_server_handling_seconds', help: 'Time to answer a gRPC call, by method', labelNames: ['method'], buckets: LATENCY_BUCKETS_S, registers: [registry] });
  }

  observe(method: string, code: string, durationMs: number): void {
    this.handled.labels(method, code).inc();
    this.duration.labels(method).observe(durationMs / 1000);
  }
}
