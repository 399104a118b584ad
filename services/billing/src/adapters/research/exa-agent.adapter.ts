import { dollarsToMicros } from '@svc/contracts';
import type { ResearchModelSpec } from '@svc/contracts';
import { callJson, isRecord, shortText } from './research-http';
import type { ResearchHttpSettings } from './research-http';
import type { PollOutcome, ProviderRunState, ResearchProviderApi, StartOutcome, StartRequest } from './research-provider';

/** A run id as Exa makes them (agent_run_…); anything else is not sent back to Exa in a path. */
const RUN_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

/** Exa's error body: {requestId, error, tag} (or a `message`). */
function describe(_status: number, body: unknown): string {
  if (!isRecord(body)) return '';
  return shortText(body.error) || shortText(body.message) || shortText(body.tag);
}

/** The sources of a run: every citation of its grounding, each URL once, in order. */
function sourcesOf(output: Record<string, unknown>): { url: string; title: string | null }[] {
  const seen = new Map<string, string | null>();
  const grounding = Array.isArray(output.grounding) ? output.grounding : [];
  for (const entry of grounding) {
    if (!isRecord(entry) || !Array.isArray(entry.citations)) continue;
    for (const citation of entry.citations) {
      if (!isRecord(citation) || typeof citation.url !== 'string' || seen.has(citation.url)) continue;
      seen.set(citation.url, typeof citation.title === 'string' ? citation.title : null);
    }
  }
  return [...seen].map(([url, title]) => ({ url, title }));
}

/** An Exa `agent_run` as the run's state; null when it is not one. */
export function exaRunState(body: unknown): ProviderRunState | null {
  if (!isRecord(body) || typeof body.status !== 'string') return null;
  const cost = { providerCostMicros: dollarsToMicros(isRecord(body.costDollars) ? body.costDollars.total : undefined) };
  switch (body.status) {
    case 'queued':
    case 'running':
      return { kind: 'running' };
    case 'completed': {
      const output = isRecord(body.output) ? body.output : {};
      return { kind: 'completed', text: typeof output.text === 'string' ? output.text : null, structured: output.structured ?? null, sources: sourcesOf(output), cost };
    }
    case 'failed':
    case 'cancelled': {
      const error = isRecord(body.error) ? shortText(body.error.message) || shortText(body.error.code) : '';
      return { kind: body.status, error: error || `the run ${body.status}`, cost: cost.providerCostMicros > 0 ? cost : null };
    }
    default:
      return null;
  }
}

/**
 * Exa's Agent runs (`POST /agent/runs`, `GET /agent/runs/{id}`, `POST /agent/runs/{id}/cancel`),
 * as exa-js 2.23 calls them (test/contract/research.contract.spec.ts checks what this sends
 * against exa-js's own `CreateAgentRunParams`). A metered effort gets the attempt's ceiling as
 * `budget.maxCostDollars`; fixed efforts take no budget (Exa refuses one).
 */
export class ExaAgentAdapter implements ResearchProviderApi {
  readonly provider = 'exa' as const;

  constructor(private readonly settings: ResearchHttpSettings) {}

  private headers(): Record<string, string> {
    return { 'x-api-key': this.settings.apiKey };
  }

  async start(request: StartRequest): Promise<StartOutcome> {
    const body: Record<string, unknown> = { query: request.input, effort: request.model.upstreamVariant, metadata: { svc_run_id: request.runId } };
    if (request.outputSchema !== null && request.outputSchema !== undefined) body.outputSchema = request.outputSchema;
    if (request.providerBudgetMicros !== null) body.budget = { maxCostDollars: request.providerBudgetMicros / 1_000_000 };
    const answer = await callJson(this.settings, { method: 'POST', path: '/agent/runs', headers: this.headers(), body }, describe);
    if (!answer.ok) return answer.failure;
    const id = isRecord(answer.body) ? answer.body.id : undefined;
    if (typeof id !== 'string' || !RUN_ID.test(id)) return { kind: 'retry', error: 'Exa answered a run without an id', retryAfterMs: null };
    return { kind: 'started', providerRunId: id };
  }

  async poll(providerRunId: string, _model: ResearchModelSpec): Promise<PollOutcome> {
    return this.read('GET', `/agent/runs/${encodeURIComponent(providerRunId)}`);
  }

  async cancel(providerRunId: string, _model: ResearchModelSpec): Promise<PollOutcome | null> {
    return this.read('POST', `/agent/runs/${encodeURIComponent(providerRunId)}/cancel`);
  }

  private async read(method: 'GET' | 'POST', path: string): Promise<PollOutcome> {
    const answer = await callJson(this.settings, { method, path, headers: this.headers() }, describe);
    if (!answer.ok) return answer.failure;
    const state = exaRunState(answer.body);
    return state === null ? { kind: 'retry', error: 'Exa answered something that is not an agent run', retryAfterMs: null } : { kind: 'state', state };
  }
}
