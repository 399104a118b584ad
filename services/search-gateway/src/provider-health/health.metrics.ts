import { PROVIDERS } from '@svc/contracts';
import { Counter, Gauge } from '@svc/metrics';
import type { Registry } from '@svc/metrics';
import { breakerState } from './health.status';
import type { ProviderHealth } from './provider-health';

/**
 * The breaker's metrics, read from ProviderHealth at scrape (nothing on the search path):
 * - gateway_provider_breaker_open{provider}: 1 while this gateway skips the provider's
 *   platform key (open or waiting for its probe), else 0 (the alert SvcProviderBreakerOpen);
 * - gateway_provider_breaker_skips_total{provider}: attempts skipped by it;
 * - gateway_provider_probes_total{provider,result}: probes this gateway sent (ok, failed).
 */
export function providerHealthMetrics(registry: Registry, health: ProviderHealth, now: () => number = Date.now): void {
  const registers = [registry];
  const open = new Gauge({
    name: 'gateway_provider_breaker_open',
    help: 'Whether the provider\'s breaker is open (1: its platform key is skipped) as this gateway sees it',
    labelNames: ['provider'],
    registers,
    collect: () => {
      for (const provider of PROVIDERS) open.labels(provider).set(breakerState(health.breaker(provider), now(), health.settings.breakerEnabled) === 'closed' ? 0 : 1);
    },
  });
  let seenSkips = { ...health.skips };
  const skips: Counter<'provider'> = new Counter({
    name: 'gateway_provider_breaker_skips_total',
    help: 'Attempts skipped because their provider\'s breaker was open',
    labelNames: ['provider'],
    registers,
    collect: () => {
      for (const provider of PROVIDERS) skips.labels(provider).inc(health.skips[provider] - seenSkips[provider]);
      seenSkips = { ...health.skips };
    },
  });
  let seenProbes = { brave: { ...health.probes.brave }, exa: { ...health.probes.exa }, tavily: { ...health.probes.tavily } };
  const probes: Counter<'provider' | 'result'> = new Counter({
    name: 'gateway_provider_probes_total',
    help: 'Probes this gateway sent to a provider whose breaker was open, by result (ok closes the breaker)',
    labelNames: ['provider', 'result'],
    registers,
    collect: () => {
      for (const provider of PROVIDERS) {
        probes.labels(provider, 'ok').inc(health.probes[provider].ok - seenProbes[provider].ok);
        probes.labels(provider, 'failed').inc(health.probes[provider].failed - seenProbes[provider].failed);
      }
      seenProbes = { brave: { ...health.probes.brave }, exa: { ...health.probes.exa }, tavily: { ...health.probes.tavily } };
    },
  });
  for (const provider of PROVIDERS) {
    skips.labels(provider).inc(0);
    probes.labels(provider, 'ok').inc(0);
    probes.labels(provider, 'failed').inc(0);
  }
}
