import { MODELS, PROVIDERS } from '@svc/contracts';
import type { ModelStatus, Provider } from '@svc/contracts';
import type { Breaker, HealthWindow, ServiceStatus } from '@svc/sdk';
import type { BreakerView, HealthFigures, ProviderHealth, WindowFigures } from './provider-health';
import { emptyFigures, quantileMs } from './provider-health';

// GET /v1/status's answer is the SDK's ServiceStatus (with its HealthWindow and Breaker):
// one declaration, which tools/openapi's contract test holds to the OpenAPI document.

/** A breaker as GET /v1/status shows it: `half_open` once the cool-down ended and the probe is due. */
export type BreakerState = Breaker['state'];

/** One window's figures as the API shows them. */
export function windowView(figures: WindowFigures): HealthWindow {
  return {
    calls: figures.calls,
    success_rate: figures.calls === 0 ? null : Math.round((figures.ok / figures.calls) * 10_000) / 10_000,
    timeouts: figures.timeout,
    server_errors: figures.server_error,
    rate_limited: figures.rate_limited,
    p50_ms: quantileMs(figures.histogram, 0.5),
    p95_ms: quantileMs(figures.histogram, 0.95),
  };
}

function sum(into: WindowFigures, from: WindowFigures): void {
  into.calls += from.calls;
  into.ok += from.ok;
  into.timeout += from.timeout;
  into.server_error += from.server_error;
  into.rate_limited += from.rate_limited;
  from.histogram.forEach((count, i) => { into.histogram[i] = (into.histogram[i] ?? 0) + count; });
}

/** What decides the models' status: the breakers, which providers have a platform key, the figures. */
export interface StatusInputs {
  readonly breaker: (provider: Provider) => BreakerView;
  readonly configured: Readonly<Record<Provider, boolean>>;
  readonly figures: HealthFigures;
  readonly nowMs: number;
  readonly breakerEnabled: boolean;
  readonly degradedFailurePercent: number;
  readonly degradedMinCalls: number;
}

export function breakerState(breaker: BreakerView, nowMs: number, breakerEnabled: boolean): BreakerState {
  if (breaker.forced === 'open') return 'open';
  if (breaker.forced === 'closed' || breaker.state === 'closed' || !breakerEnabled) return 'closed';
  return breaker.openUntilMs <= nowMs ? 'half_open' : 'open';
}

/**
 * A model's status: `unavailable` while its provider's breaker skips it (or the deployment has
 * no platform key for it), `degraded` when at least degradedFailurePercent of its calls over the
 * last 5 minutes failed (from degradedMinCalls calls on), else `operational`.
 */
export function modelStatus(inputs: StatusInputs, provider: Provider, last5m: WindowFigures): ModelStatus {
  if (!inputs.configured[provider] || breakerState(inputs.breaker(provider), inputs.nowMs, inputs.breakerEnabled) !== 'closed') return 'unavailable';
  const failed = last5m.timeout + last5m.server_error + last5m.rate_limited;
  if (last5m.calls >= inputs.degradedMinCalls && failed * 100 >= inputs.degradedFailurePercent * last5m.calls) return 'degraded';
  return 'operational';
}

/** Every model's status (GET /v1/models). */
export function modelStatuses(inputs: StatusInputs): Record<string, ModelStatus> {
  const statuses: Record<string, ModelStatus> = {};
  for (const model of MODELS) statuses[model.id] = modelStatus(inputs, model.provider, inputs.figures.models.get(model.id)?.last5m ?? emptyFigures());
  return statuses;
}

const WORST: Readonly<Record<ModelStatus, number>> = { operational: 0, degraded: 1, unavailable: 2 };

/** The body of GET /v1/status without its request id. */
export function statusBody(inputs: StatusInputs): Omit<ServiceStatus, 'request_id'> {
  const models = MODELS.map((model) => {
    const figures = inputs.figures.models.get(model.id) ?? { last5m: emptyFigures(), last1h: emptyFigures() };
    return {
      id: model.id,
      provider: model.provider,
      status: modelStatus(inputs, model.provider, figures.last5m),
      last_5m: windowView(figures.last5m),
      last_1h: windowView(figures.last1h),
    };
  });
  const providers = PROVIDERS.map((provider): ServiceStatus['providers'][number] => {
    const breaker = inputs.breaker(provider);
    const state = breakerState(breaker, inputs.nowMs, inputs.breakerEnabled);
    const last5m = emptyFigures();
    const last1h = emptyFigures();
    let worst: ModelStatus = 'operational';
    for (const model of MODELS) {
      if (model.provider !== provider) continue;
      const figures = inputs.figures.models.get(model.id);
      if (figures !== undefined) {
        sum(last5m, figures.last5m);
        sum(last1h, figures.last1h);
      }
    }
    for (const view of models) if (view.provider === provider && WORST[view.status] > WORST[worst]) worst = view.status;
    return {
      provider,
      status: worst,
      configured: inputs.configured[provider],
      breaker: {
        state,
        forced: breaker.forced,
        reason: state === 'closed' ? null : breaker.reason,
        opened_at: state === 'closed' || breaker.openedAtMs === 0 ? null : new Date(breaker.openedAtMs).toISOString(),
        // No probe while an operator holds it open: no time to give.
        retry_after_seconds: state === 'closed' || breaker.forced === 'open' ? null : Math.max(1, Math.ceil(Math.max(0, breaker.openUntilMs - inputs.nowMs) / 1000)),
      },
      last_5m: windowView(last5m),
      last_1h: windowView(last1h),
    };
  });
  return { updated_at: new Date(inputs.figures.atMs || inputs.nowMs).toISOString(), breaker_enabled: inputs.breakerEnabled, providers, models };
}

/** The status page's inputs from a ProviderHealth (after loading its figures, or with the last read). */
export function statusInputs(health: ProviderHealth, configured: Readonly<Record<Provider, boolean>>, figures: HealthFigures, nowMs: number): StatusInputs {
  const { settings } = health;
  return {
    breaker: (provider) => health.breaker(provider),
    configured, figures, nowMs,
    breakerEnabled: settings.breakerEnabled,
    degradedFailurePercent: settings.degradedFailurePercent,
    degradedMinCalls: settings.degradedMinCalls,
  };
}
