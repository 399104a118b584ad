import { minCapMicros, RESEARCH_MODELS, RESEARCH_RULES } from '@svc/contracts';
import type { Provider, ResearchModelSpec } from '@svc/contracts';
import { microsToUsd } from '@svc/money';

/**
 * The research models as the catalog shows them (kind "research", docs/decisions/0065): the
 * search pricing fields at their neutral values (a run is priced neither per search nor per
 * result, nor answered from the cache), then how the model is metered, the price of its unit,
 * the most a run can cost and the least cap it runs on.
 */
function pricing(model: ResearchModelSpec): object {
  return {
    base_usd: 0,
    included_results: null,
    per_result_usd: 0,
    cache_price_usd: null,
    metering: model.metering,
    unit_usd: microsToUsd(model.priceMicros),
    max_cost_usd: microsToUsd(model.maxCostMicros),
    min_cap_usd: microsToUsd(minCapMicros(model)),
  };
}

/** The research models of GET /v1/models, after the search models; each with the catalog's rules for a run that did not complete. */
export function researchModelsData(available: Readonly<Record<Provider, boolean>>): object[] {
  return RESEARCH_MODELS.map((model) => ({
    id: model.id,
    kind: model.kind,
    provider: model.provider,
    variant: model.variant,
    description: model.description,
    max_results: 0,
    pricing: pricing(model),
    available: available[model.provider],
    supported_filters: [],
    // Provider health is measured on search calls; a research model shows whether its provider is configured.
    status: available[model.provider] ? 'operational' : 'unavailable',
    research_rules: { ...RESEARCH_RULES[model.provider] },
  }));
}

/** The research models of GET /v1/credits/pricing. */
export function researchPrices(): object[] {
  return RESEARCH_MODELS.map((model) => ({ id: model.id, kind: model.kind, ...pricing(model) }));
}
