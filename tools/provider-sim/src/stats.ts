import type { SimProvider } from './directives';

export interface ProviderCounters {
  in_flight: number;
  total: number;
  /** High-water mark of in_flight since start or the last reset. */
  max_in_flight: number;
}

export type SimStats = Record<SimProvider, ProviderCounters>;

/** Requests per provider: in flight now, and in total since start or the last reset. */
export class StatsCounter {
  private readonly counters: SimStats = {
    brave: { in_flight: 0, total: 0, max_in_flight: 0 },
    exa: { in_flight: 0, total: 0, max_in_flight: 0 },
    tavily: { in_flight: 0, total: 0, max_in_flight: 0 },
  };

  begin(provider: SimProvider): void {
    this.counters[provider].in_flight += 1;
    this.counters[provider].total += 1;
    this.counters[provider].max_in_flight = Math.max(this.counters[provider].max_in_flight, this.counters[provider].in_flight);
  }

  end(provider: SimProvider): void {
    this.counters[provider].in_flight -= 1;
  }

  /** Zeroes the totals; requests still in flight stay counted as in flight (and as the high-water mark). */
  reset(): void {
    for (const counter of Object.values(this.counters)) counter.total = 0;
    for (const counter of Object.values(this.counters)) counter.max_in_flight = counter.in_flight;
  }

  snapshot(): SimStats {
    return {
      brave: { ...this.counters.brave },
      exa: { ...this.counters.exa },
      tavily: { ...this.counters.tavily },
    };
  }
}
