import { collectDefaultMetrics, Registry } from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Latency buckets in seconds, from 1 ms to the longest search (10 models x 15 s): the same
 * buckets on every latency histogram, so dashboards and alerts compare like with like.
 */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 150];

/**
 * One registry per process, with the process's own metrics (CPU, memory, event-loop lag,
 * handles) and a `service` label on every series.
 */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
