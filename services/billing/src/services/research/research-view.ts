import { microsToUsd } from '@svc/money';
import type { ResearchRunRow } from '../../stores/research.repository';

const usdOrNull = (micros: number | null): number | null => (micros === null ? null : microsToUsd(micros));
const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());

/** An attempt as the API shows it (never the provider's own run id or the provider's price). */
function attemptView(a: ResearchRunRow['attempts'][number]): object {
  return { model: a.model, provider: a.provider, status: a.status, error: a.error, cost_usd: usdOrNull(a.chargedMicros) };
}

/** A run in a list (GET /v1/research): everything but its output and sources. */
export function researchSummaryView(row: ResearchRunRow): Record<string, unknown> {
  const current = row.currentAttempt === null ? undefined : row.attempts[row.currentAttempt];
  const answered = row.attempts.find((a) => a.status === 'completed');
  // A run that ended without an answer names the last model the provider ran (failed or cancelled there).
  const lastRan = [...row.attempts].reverse().find((a) => a.status === 'failed' || a.status === 'cancelled');
  return {
    id: row.id,
    object: 'research_run',
    status: row.status,
    input: row.input,
    models: row.models,
    model: answered?.model ?? current?.model ?? lastRan?.model ?? null,
    max_cost_usd: microsToUsd(row.maxCostMicros),
    held_usd: row.settledAt === null ? microsToUsd(row.heldMicros) : 0,
    cost_usd: usdOrNull(row.costMicros),
    attempts: row.attempts.map(attemptView),
    error: row.error,
    metadata: row.metadata,
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    completed_at: iso(row.completedAt),
    cancel_requested_at: iso(row.cancelRequestedAt),
  };
}

/** A run with its output (GET /v1/research/{id}, the create and cancel answers, the webhook events, MCP). */
export function researchRunView(row: ResearchRunRow): Record<string, unknown> {
  return {
    ...researchSummaryView(row),
    output: row.output === null ? null : { text: row.output.text, structured: row.output.structured ?? null },
    sources: row.sources ?? [],
  };
}
