export { ProviderHealth, latencyBucket, quantileMs } from './provider-health';
export type { ProviderHealthSettings, BreakerView, HealthProviders } from './provider-health';
export { statusBody, modelStatuses, breakerState } from './health.status';
export { catalogHealth } from './health.catalog';
export { providerHealthMetrics } from './health.metrics';
