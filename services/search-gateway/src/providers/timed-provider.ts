import { performance } from 'node:perf_hooks';
import type { Provider } from '@svc/contracts';
import type { ExtractOutcome, ExtractProvider, ProviderExtractRequest, ProviderFailure, ProviderOutcome, ProviderSearchRequest, SearchProvider } from './search-provider';

/** Told of every provider call that returned, with its outcome and how long it took. */
export interface ProviderCallObserver {
  providerCall(provider: Provider, outcome: { readonly ok: true } | ProviderFailure, durationMs: number): void;
}

/**
 * An adapter with its calls timed: the registry wraps each adapter in one at start when it
 * is given an observer (the gateway's SearchMetrics, for
 * gateway_provider_request_duration_seconds), so a search's attempts and provider health's
 * probes are both counted. A call that throws is not observed (the attempt reports it).
 */
export class TimedProvider implements SearchProvider {
  readonly provider: Provider;

  constructor(
    private readonly inner: SearchProvider,
    private readonly observer: ProviderCallObserver,
  ) {
    this.provider = inner.provider;
  }

  async search(request: ProviderSearchRequest): Promise<ProviderOutcome> {
    const started = performance.now();
    const outcome = await this.inner.search(request);
    this.observer.providerCall(this.provider, outcome, performance.now() - started);
    return outcome;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** An extract adapter with its calls timed, as TimedProvider a search adapter's. */
export class TimedExtractor implements ExtractProvider {
  readonly provider: Provider;

  constructor(
    private readonly inner: ExtractProvider,
    private readonly observer: ProviderCallObserver,
  ) {
    this.provider = inner.provider;
  }

  async extract(request: ProviderExtractRequest): Promise<ExtractOutcome> {
    const started = performance.now();
    const outcome = await this.inner.extract(request);
    this.observer.providerCall(this.provider, outcome, performance.now() - started);
    return outcome;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
