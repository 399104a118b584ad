import type { ResearchModelSpec } from '@svc/contracts';
import { callJson, isRecord, shortText } from './research-http';
import type { ResearchHttpSettings } from './research-http';
import type { PollOutcome, ProviderRunState, ResearchProviderApi, StartOutcome, StartRequest } from './research-provider';

/** A Tavily request id (a UUID); anything else is not sent back in a path. */
const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,200}$/;

/** Tavily's error body: {detail: {error}}. */
function describe(_status: number, body: unknown): string {
  return isRecord(body) && isRecord(body.detail) ? shortText(body.detail.error) : '';
}

/** A Tavily research task as the run's state; null when it is not one. */
export function tavilyTaskState(status: number, body: unknown): ProviderRunState | null {
  if (!isRecord(body) || typeof body.status !== 'string') return null;
  const credits = isRecord(body.usage) && typeof body.usage.credits === 'number' && Number.isSafeInteger(body.usage.credits) && body.usage.credits >= 0 ? body.usage.credits : null;
  switch (body.status) {
    case 'pending':
    case 'in_progress':
      return { kind: 'running' };
    case 'completed': {
      if (status !== 200) return null;
      const content = body.content;
      const sources = (Array.isArray(body.sources) ? body.sources : []).flatMap((source) =>
        isRecord(source) && typeof source.url === 'string' ? [{ url: source.url, title: typeof source.title === 'string' ? source.title : null }] : []);
      return {
        kind: 'completed',
        text: typeof content === 'string' ? content : null,
        structured: isRecord(content) ? content : null,
        sources,
        // A completed task without usage (include_usage not honoured) is charged nothing rather than guessed.
        cost: { credits: credits ?? 0 },
      };
    }
    case 'failed':
      return { kind: 'failed', error: 'Tavily reports the task failed', cost: credits === null ? null : { credits } };
    default:
      return null;
  }
}

/**
 * Tavily's research (`POST /research`, `GET /research/{request_id}?include_usage=true`), as
 * @tavily/core 0.7 calls it (test/contract/research.contract.spec.ts checks what this sends
 * against the client's own options). Tavily has no cancel and no ceiling: the model runs only
 * when its most possible cost fits in the run's cap (research-plan.ts).
 */
export class TavilyResearchAdapter implements ResearchProviderApi {
  readonly provider = 'tavily' as const;

  constructor(private readonly settings: ResearchHttpSettings) {}

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.settings.apiKey}` };
  }

  async start(request: StartRequest): Promise<StartOutcome> {
    const body: Record<string, unknown> = { input: request.input, model: request.model.upstreamVariant };
    if (request.outputSchema !== null && request.outputSchema !== undefined) body.output_schema = request.outputSchema;
    const answer = await callJson(this.settings, { method: 'POST', path: '/research', headers: this.headers(), body }, describe);
    if (!answer.ok) return answer.failure;
    const id = isRecord(answer.body) ? answer.body.request_id : undefined;
    if (typeof id !== 'string' || !REQUEST_ID.test(id)) return { kind: 'retry', error: 'Tavily answered a task without a request_id', retryAfterMs: null };
    return { kind: 'started', providerRunId: id };
  }

  async poll(providerRunId: string, _model: ResearchModelSpec): Promise<PollOutcome> {
    const answer = await callJson(this.settings, { method: 'GET', path: `/research/${encodeURIComponent(providerRunId)}?include_usage=true`, headers: this.headers() }, describe);
    if (!answer.ok) return answer.failure;
    const state = tavilyTaskState(answer.status, answer.body);
    return state === null ? { kind: 'retry', error: 'Tavily answered something that is not a research task', retryAfterMs: null } : { kind: 'state', state };
  }

  /** Tavily has no cancel. */
  async cancel(): Promise<null> {
    return null;
  }
}
