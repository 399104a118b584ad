import { createRegistry, GrpcServerMetrics, HttpMetrics } from '@svc/metrics';
import type { Registry } from '@svc/metrics';

/** Nest injection token of AccountAdminMetrics. */
export const METRICS = Symbol('METRICS');

/** account-admin's metrics: its HTTP edge and its gRPC server (served on METRICS_PORT by main.ts). */
export class AccountAdminMetrics {
  readonly http: HttpMetrics;
  readonly grpc: GrpcServerMetrics;

  constructor(readonly registry: Registry = createRegistry('account-admin')) {
    this.http = new HttpMetrics(registry);
    this.grpc = new GrpcServerMetrics(registry);
  }
}
