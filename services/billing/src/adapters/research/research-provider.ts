import type { ResearchModelSpec, ResearchProvider } from '@svc/contracts';
import type { Micros } from '@svc/money';

/** What a provider reports a run cost: Exa in dollars (micro-USD here), Tavily in credits. */
export type CostReport = { providerCostMicros: Micros } | { credits: number };

/** A run as the provider sees it now. */
export type ProviderRunState =
  | { kind: 'running' }
  | {
      kind: 'completed';
      text: string | null;
      structured: unknown;
      sources: { url: string; title: string | null }[];
      cost: CostReport;
    }
  /** Failed or cancelled at the provider; `cost` what it reports (none: nothing charged). */
  | { kind: 'failed' | 'cancelled'; error: string; cost: CostReport | null };

/**
 * A call that did not give an answer about the run: `retry` for a passing failure (429, 5xx,
 * unreachable, a timeout), `refused` when the provider will not take the request as it is (a
 * 4xx other than 429: bad request, bad key, no credits).
 */
export type CallFailure = { kind: 'retry'; error: string; retryAfterMs: number | null } | { kind: 'refused'; error: string };

export type StartOutcome = { kind: 'started'; providerRunId: string } | CallFailure;
export type PollOutcome = { kind: 'state'; state: ProviderRunState } | CallFailure;

export interface StartRequest {
  model: ResearchModelSpec;
  input: string;
  outputSchema: unknown;
  /** A metered model's budget in provider micro-USD; null: none sent. */
  providerBudgetMicros: Micros | null;
  /** Our run id, sent as the provider's metadata where it takes some. */
  runId: string;
}

/** One provider's research API: exa-agent.adapter.ts and tavily-research.adapter.ts beside this file. */
export interface ResearchProviderApi {
  readonly provider: ResearchProvider;
  start(request: StartRequest): Promise<StartOutcome>;
  poll(providerRunId: string, model: ResearchModelSpec): Promise<PollOutcome>;
  /** Cancels at the provider and answers the run's state after it; null when the provider has no cancel. */
  cancel(providerRunId: string, model: ResearchModelSpec): Promise<PollOutcome | null>;
}
