import type { Micros } from '@svc/money';
import { redisKeys } from './redis-keys';

/**
 * Research runs (docs/api.md, "Research runs"; docs/decisions/0062): long-running provider
 * research with a hard cap. The research models, their prices and the rules for failed and
 * cancelled runs are declared here once; the gateway's catalog answers, billing's API and
 * research worker, the SDK, the MCP tools and the docs' tables read them from here.
 */

export const RESEARCH_PROVIDERS = ['exa', 'tavily'] as const;
export type ResearchProvider = (typeof RESEARCH_PROVIDERS)[number];

/**
 * How a research model is metered:
 * - `per_run`: a fixed price per run (Exa's fixed efforts); the provider reports it as the run's `costDollars.total`;
 * - `usage`: the provider's reported cost (Exa's metered efforts, `costDollars.total`) at our rate, with the run's
 *   remaining cap given to the provider as its budget (`budget.maxCostDollars`);
 * - `credits`: the provider's reported credits (Tavily's `usage.credits`) at our price per credit; Tavily takes no
 *   ceiling, so the model runs only when its most possible cost fits in what the cap leaves.
 */
export const RESEARCH_METERING = ['per_run', 'usage', 'credits'] as const;
export type ResearchMetering = (typeof RESEARCH_METERING)[number];

export interface ResearchModelSpec {
  readonly id: string;
  readonly kind: 'research';
  readonly provider: ResearchProvider;
  /** The part of the id after the provider. */
  readonly variant: string;
  /** What the adapter sends: Exa's `effort`, Tavily's `model`. */
  readonly upstreamVariant: string;
  readonly description: string;
  readonly metering: ResearchMetering;
  /**
   * Our price of one unit, micro-USD: per_run, one run; usage, one provider USD (1,250,000 = 1.25 USD
   * per USD the provider reports); credits, one credit.
   */
  readonly priceMicros: Micros;
  /** What the provider charges for the same unit, micro-USD (its published price; docs/providers.md). */
  readonly providerPriceMicros: Micros;
  /** The most one run of this model can cost at our price (a metered model: with its largest budget). */
  readonly maxCostMicros: Micros;
  /** The budget a metered model takes, in provider micro-USD (`budget.maxCostDollars`'s range); null: none. */
  readonly budget: { readonly minProviderMicros: Micros; readonly maxProviderMicros: Micros } | null;
  /** The provider can cancel a run it started (Exa: POST /agent/runs/{id}/cancel; Tavily has no cancel). */
  readonly cancellable: boolean;
}

/** Tavily's pay-as-you-go price of one credit (micro-USD), and ours. */
export const TAVILY_CREDIT_PROVIDER_MICROS = 8_000;
export const TAVILY_CREDIT_MICROS = 10_000;
/** Our rate on Exa's reported cost: 1.25 USD per provider USD (the catalog's search markup, docs/providers.md). */
const EXA_RATE_MICROS = 1_250_000;
/** Exa's budget.maxCostDollars range for the metered efforts. */
const EXA_BUDGET = { minProviderMicros: 1_000_000, maxProviderMicros: 100_000_000 } as const;

function exaFixed(effort: string, providerMicros: Micros, description: string): ResearchModelSpec {
  const priceMicros = Math.round((providerMicros * EXA_RATE_MICROS) / 1_000_000);
  return {
    id: `exa/agent-${effort}`, kind: 'research', provider: 'exa', variant: `agent-${effort}`, upstreamVariant: effort, description,
    metering: 'per_run', priceMicros, providerPriceMicros: providerMicros, maxCostMicros: priceMicros, budget: null, cancellable: true,
  };
}

function exaMetered(effort: string, description: string): ResearchModelSpec {
  return {
    id: `exa/agent-${effort}`, kind: 'research', provider: 'exa', variant: `agent-${effort}`, upstreamVariant: effort, description,
    metering: 'usage', priceMicros: EXA_RATE_MICROS, providerPriceMicros: 1_000_000,
    maxCostMicros: Math.round((EXA_BUDGET.maxProviderMicros * EXA_RATE_MICROS) / 1_000_000), budget: EXA_BUDGET, cancellable: true,
  };
}

function tavily(model: string, maxCredits: number, description: string): ResearchModelSpec {
  return {
    id: `tavily/research-${model}`, kind: 'research', provider: 'tavily', variant: `research-${model}`, upstreamVariant: model, description,
    metering: 'credits', priceMicros: TAVILY_CREDIT_MICROS, providerPriceMicros: TAVILY_CREDIT_PROVIDER_MICROS,
    maxCostMicros: maxCredits * TAVILY_CREDIT_MICROS, budget: null, cancellable: false,
  };
}

/** The research models (docs/providers.md, "Research models": prices and where they come from). */
export const RESEARCH_MODELS: readonly ResearchModelSpec[] = Object.freeze([
  exaFixed('minimal', 12_000, 'Exa Agent run, minimal effort (a fixed price per run)'),
  exaFixed('low', 25_000, 'Exa Agent run, low effort (a fixed price per run)'),
  exaFixed('medium', 100_000, 'Exa Agent run, medium effort (a fixed price per run)'),
  exaFixed('high', 500_000, 'Exa Agent run, high effort (a fixed price per run)'),
  exaFixed('xhigh', 1_000_000, 'Exa Agent run, extra-high effort (a fixed price per run)'),
  exaMetered('auto', 'Exa Agent run, automatic effort (metered; the run\'s cap is given to Exa as its budget)'),
  exaMetered('ultra', 'Exa Agent run, ultra effort (metered, the longest runs; the run\'s cap is given to Exa as its budget)'),
  tavily('mini', 110, 'Tavily research, mini model (4 to 110 credits a run; no ceiling the caller can set)'),
  tavily('pro', 250, 'Tavily research, pro model (15 to 250 credits a run; no ceiling the caller can set)'),
  tavily('auto', 250, 'Tavily research, Tavily picks mini or pro (up to 250 credits a run)'),
]);

const BY_ID = new Map(RESEARCH_MODELS.map((model) => [model.id, model]));

export function findResearchModel(id: string): ResearchModelSpec | undefined {
  return BY_ID.get(id);
}

const NOT_STARTED_RULE = 'charged nothing: a run cancelled or failed before the provider accepted it, or skipped, costs nothing';

/**
 * The least cap (what is left of it) on which `model` runs, micro-USD: a fixed-price or credit
 * model's most possible cost; a metered model's smallest budget at its rate (attemptMoney).
 */
export function minCapMicros(model: ResearchModelSpec): Micros {
  if (model.budget === null) return model.maxCostMicros;
  return Math.ceil((model.budget.minProviderMicros * model.priceMicros) / model.providerPriceMicros);
}

/**
 * The catalog's rules for a run that did not complete, per provider (GET /v1/models and
 * /v1/credits/pricing show them; docs/api.md states them in prose). A run the provider never
 * started costs nothing, whatever the provider.
 */
export const RESEARCH_RULES: Readonly<Record<ResearchProvider, { readonly failed: string; readonly cancelled: string; readonly not_started: string }>> = {
  exa: {
    failed: 'charged what Exa reports for the run (costDollars.total) at the model\'s rate, never above the cap; nothing when Exa reports no cost',
    cancelled: 'cancelled at Exa at once and charged what Exa reports for the run so far, at the model\'s rate, never above the cap',
    not_started: NOT_STARTED_RULE,
  },
  tavily: {
    failed: 'charged nothing: Tavily reports no usage for a failed task',
    cancelled: 'Tavily has no cancel: the task finishes at Tavily and is charged the credits it reports, never above the cap; its output is discarded',
    not_started: NOT_STARTED_RULE,
  },
};

export const RESEARCH_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type ResearchStatus = (typeof RESEARCH_STATUSES)[number];
/** A terminal run is settled: its cost is final and its hold released. */
export const RESEARCH_TERMINAL_STATUSES: readonly ResearchStatus[] = ['completed', 'failed', 'cancelled'];

/** One attempt of a run: a model tried, skipped or waiting its turn. */
export const RESEARCH_ATTEMPT_STATUSES = ['pending', 'skipped', 'running', 'completed', 'failed', 'cancelled'] as const;
export type ResearchAttemptStatus = (typeof RESEARCH_ATTEMPT_STATUSES)[number];

/** The research worker's BullMQ queues, one per provider (each limited to the provider's documented request rate), under QUEUE_PREFIX. */
export const RESEARCH_QUEUES: Readonly<Record<ResearchProvider, string>> = { exa: 'research-exa', tavily: 'research-tavily' };
/** The one job name of a research queue: advance one run by one step (start, poll, cancel, settle). Its job id is the run id. */
export const RESEARCH_JOB = 'advance';

/** A run's reservation hash while it is being created (the same `{a:X}:rsv:<id>` shape as a search's, so reconciliation finds a stale one). */
export function researchReservationKey(accountId: string, runId: string): string {
  return `${redisKeys.accountTag(accountId)}:rsv:${runId}`;
}

/** The default bound of a run, from its creation: past it the run is given up (RESEARCH_RUN_TIMEOUT_MS). */
export const DEFAULT_RESEARCH_RUN_TIMEOUT_MS = 2 * 3_600_000;

/** Money of one attempt, in micro-USD. */
export interface AttemptMoney {
  /** The most this attempt may be charged: min(what the cap leaves, the model's most possible cost). */
  ceilingMicros: Micros;
  /** A metered model's budget for the provider, in provider micro-USD (null: the model takes none). */
  providerBudgetMicros: Micros | null;
}

/**
 * What an attempt of `model` may cost when `remainingMicros` of the cap is left, or why it
 * cannot run: a fixed-price or credit model whose most possible cost passes what is left is
 * skipped; a metered model gets what is left as its budget (in provider money, at most its
 * largest budget) unless that is below the smallest budget the provider accepts.
 */
export function attemptMoney(model: ResearchModelSpec, remainingMicros: Micros): { ok: true; money: AttemptMoney } | { ok: false; reason: string } {
  const usd = (micros: Micros): string => (micros / 1_000_000).toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  if (model.budget === null) {
    if (model.maxCostMicros > remainingMicros) {
      return { ok: false, reason: `its most possible cost (${usd(model.maxCostMicros)} USD) exceeds what the cap leaves (${usd(remainingMicros)} USD)` };
    }
    return { ok: true, money: { ceilingMicros: model.maxCostMicros, providerBudgetMicros: null } };
  }
  const ceiling = Math.min(remainingMicros, model.maxCostMicros);
  const providerBudget = Math.min(model.budget.maxProviderMicros, Math.floor((ceiling * model.providerPriceMicros) / model.priceMicros));
  if (providerBudget < model.budget.minProviderMicros) {
    return { ok: false, reason: `what the cap leaves (${usd(remainingMicros)} USD) is below the smallest budget the provider accepts (${usd(minCapMicros(model))} USD at this model's rate)` };
  }
  return { ok: true, money: { ceilingMicros: ceiling, providerBudgetMicros: providerBudget } };
}

/** What the provider's report is at our price, micro-USD (halves rounded up), before any ceiling. */
export function atOurRateMicros(model: ResearchModelSpec, report: { providerCostMicros: Micros } | { credits: number }): Micros {
  if ('credits' in report) return report.credits * model.priceMicros;
  return Math.floor((report.providerCostMicros * model.priceMicros + Math.floor(model.providerPriceMicros / 2)) / model.providerPriceMicros);
}

/** What the provider charged the platform, micro-USD, from its report. */
export function providerCostMicros(model: ResearchModelSpec, report: { providerCostMicros: Micros } | { credits: number }): Micros {
  return 'credits' in report ? report.credits * model.providerPriceMicros : report.providerCostMicros;
}

/** A provider's dollar figure as integer micro-USD (halves away from zero; negative and non-finite are 0). */
export function dollarsToMicros(dollars: unknown): Micros {
  if (typeof dollars !== 'number' || !Number.isFinite(dollars) || dollars <= 0) return 0;
  return Math.round(dollars * 1_000_000);
}
