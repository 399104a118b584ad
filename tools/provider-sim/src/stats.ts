import type { SimProvider } from './directives';

export interface ProviderCounters {
  in_flight: number;
  total: number;
}

export type SimStats = Record<SimProvider, ProviderCounters>;

/** Requests per provider: in flight now, and in total since start or the last reset. */
export class StatsCounter {
  private readonly counters: SimStats = {
    brave: { in_flight: 0, total: 0 },
    exa: { in_flight: 0, total: 0 },
    tavily: { in_flight: 0, total: 0 },
  };

  begin(provider: SimProvider): void {
    this.counters[provider].in_flight += 1;
    this.counters[provider].total += 1;
  }

  end(provider: SimProvider): void {
    this.counters[provider].in_flight -= 1;
  }

  /** Zeroes the totals; requests still in flight stay counted as in flight. */
  reset(): void {
    for (const counter of Object.values(this.counters)) counter.total = 0;
  }

  snapshot(): SimStats {
    return {
      brave: { ...this.counters.brave },
      exa: { ...this.counters.exa },
      tavily: { ...this.counters.tavily },
    };
  }
}
