import { CATALOG, cachePriceMicros, DEFAULT_CACHE_PRICE_PERCENT, LIMITS } from '@svc/contracts';
import type { Provider } from '@svc/contracts';
import { microsToUsd } from '@svc/money';

export type ProviderAvailability = Readonly<Record<Provider, boolean>>;

export interface ByokSettings {
  enabled: boolean;
  feePercent: number;
}

/** Checkout amounts accepted by billing (spec section 8). */
export const PURCHASE_LIMITS_USD = { min_usd: LIMITS.purchaseUsd.min, max_usd: LIMITS.purchaseUsd.max } as const;

/** The `data` of GET /v1/models (docs/api.md section 7), from the one catalog. */
export function modelsData(available: ProviderAvailability, cachePercent: number | null = DEFAULT_CACHE_PRICE_PERCENT): object[] {
  return CATALOG.map((model) => ({
    id: model.id,
    provider: model.provider,
    variant: model.variant,
    description: model.description,
    max_results: model.maxResults,
    pricing: {
      base_usd: microsToUsd(model.baseMicros),
      included_results: model.includedResults,
      per_result_usd: microsToUsd(model.perResultMicros),
      cache_price_usd: cachePercent === null ? null : microsToUsd(cachePriceMicros(model, cachePercent)),
    },
    available: available[model.provider],
    supported_filters: [...model.supportedFilters],
  }));
}

/** GET /v1/credits/pricing without the request id (docs/api.md section 7). */
export function pricingBody(byok: ByokSettings, cachePercent: number | null = DEFAULT_CACHE_PRICE_PERCENT): object {
  return {
    currency: 'USD',
    models: CATALOG.map((model) => ({
      id: model.id,
      base_usd: microsToUsd(model.baseMicros),
      included_results: model.includedResults,
      per_result_usd: microsToUsd(model.perResultMicros),
      cache_price_usd: cachePercent === null ? null : microsToUsd(cachePriceMicros(model, cachePercent)),
    })),
    purchase: { ...PURCHASE_LIMITS_USD },
    byok: { enabled: byok.enabled, fee_percent: byok.feePercent },
    cache: { enabled: cachePercent !== null, price_percent: cachePercent },
  };
}

/**
 * The catalog never changes while the process runs, so each body is serialized once;
 * a request only appends its request id.
 */
export class CatalogService {
  private readonly modelsPrefix: string;
  private readonly pricingPrefix: string;

  /** `cachePercent`: CACHE_PRICE_PERCENT, or null when the deployment has no result cache. */
  constructor(available: ProviderAvailability, byok: ByokSettings, cachePercent: number | null = DEFAULT_CACHE_PRICE_PERCENT) {
    this.modelsPrefix = `{"data":${JSON.stringify(modelsData(available, cachePercent))},"request_id":`;
    const pricing = JSON.stringify(pricingBody(byok, cachePercent));
    this.pricingPrefix = `${pricing.slice(0, -1)},"request_id":`;
  }

  modelsJson(requestId: string): string {
    return `${this.modelsPrefix}${JSON.stringify(requestId)}}`;
  }

  pricingJson(requestId: string): string {
    return `${this.pricingPrefix}${JSON.stringify(requestId)}}`;
  }
}
