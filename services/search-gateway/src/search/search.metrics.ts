import type { Provider } from '@svc/contracts';
import type { ProviderFailureKind } from '../providers';

/** In-process counters of provider failures; operators read them from logs and (later) a metrics endpoint. */
export class SearchMetrics {
  private readonly failures = new Map<string, number>();

  countFailure(provider: Provider, kind: ProviderFailureKind): void {
    const name = `${provider}:${kind}`;
    this.failures.set(name, (this.failures.get(name) ?? 0) + 1);
  }

  /** Failures of one kind at one provider since start. */
  failuresOf(provider: Provider, kind: ProviderFailureKind): number {
    return this.failures.get(`${provider}:${kind}`) ?? 0;
  }
}
