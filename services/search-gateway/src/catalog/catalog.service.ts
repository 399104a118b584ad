import { cachePriceMicros, DEFAULT_CACHE_PRICE_PERCENT, extractCachePriceMicros, LIMITS, MODELS } from '@svc/contracts';
import type { CatalogModel, ModelStatus, Provider } from '@svc/contracts';
import { researchModelsData, researchPrices } from './research-catalog';
import { microsToUsd } from '@svc/money';

export type ProviderAvailability = Readonly<Record<Provider, boolean>>;

export interface ByokSettings {
  enabled: boolean;
  feePercent: number;
}

/** What the catalog shows of provider health (docs/decisions/0027). */
export interface CatalogHealth {
  /** Every model's status now (an in-process read). */
  statuses(): Readonly<Record<string, ModelStatus>>;
  /** The body of GET /v1/status with the request id. */
  statusJson(requestId: string): Promise<string>;
}

/** Checkout amounts accepted by billing (spec section 8). */
export const PURCHASE_LIMITS_USD = { min_usd: LIMITS.purchaseUsd.min, max_usd: LIMITS.purchaseUsd.max } as const;

/**
 * A model's prices as GET /v1/models and /v1/credits/pricing show them: a search model's per
 * search (and what contents add), an extract model's per URL (base_usd 0; per_url_usd and the
 * block its URLs are charged in), each with its cache price.
 */
export function modelPricing(model: CatalogModel, cachePercent: number | null): object {
  if (model.kind === 'extract') {
    return {
      base_usd: 0,
      included_results: null,
      per_result_usd: 0,
      cache_price_usd: cachePercent === null ? null : microsToUsd(extractCachePriceMicros(model, cachePercent)),
      per_url_usd: microsToUsd(model.perUrlMicros),
      url_block: model.urlBlock,
    };
  }
  return {
    base_usd: microsToUsd(model.baseMicros),
    included_results: model.includedResults,
    per_result_usd: microsToUsd(model.perResultMicros),
    cache_price_usd: cachePercent === null ? null : microsToUsd(cachePriceMicros(model, cachePercent)),
    contents_usd: microsToUsd(model.contentsMicros),
  };
}

/** The `data` of GET /v1/models (docs/api.md section 7), from the one catalog: every model of every kind (research models last). */
export function modelsData(
  available: ProviderAvailability,
  statuses: Readonly<Record<string, ModelStatus>> | null = null,
  cachePercent: number | null = DEFAULT_CACHE_PRICE_PERCENT,
): object[] {
  const models = MODELS.map((model) => ({
    id: model.id,
    kind: model.kind,
    provider: model.provider,
    variant: model.variant,
    description: model.description,
    max_results: model.kind === 'extract' ? model.maxUrls : model.maxResults,
    pricing: modelPricing(model, cachePercent),
    available: available[model.provider],
    supported_filters: model.kind === 'extract' ? [] : [...model.supportedFilters],
    ...(model.kind === 'extract'
      ? { supported_formats: [...model.supportedFormats], supported_options: [...model.supportedOptions] }
      : { supported_contents: [...model.supportedContents] }),
    // Provider health (docs/decisions/0027): what this gateway knows of the model now.
    status: statuses?.[model.id] ?? (available[model.provider] ? 'operational' : 'unavailable'),
  }));
  return [...models, ...researchModelsData(available)];
}

/** GET /v1/credits/pricing without the request id (docs/api.md section 7). */
export function pricingBody(byok: ByokSettings, cachePercent: number | null = DEFAULT_CACHE_PRICE_PERCENT): object {
  return {
    currency: 'USD',
    models: [...MODELS.map((model) => ({ id: model.id, kind: model.kind, ...modelPricing(model, cachePercent) })), ...researchPrices()],
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
  private readonly pricingPrefix: string;

  private modelsPrefix: string;
  private statusKey = '';

  /**
   * `health`: every model's status now and the status page (provider health); absent: statuses from `available` alone, no status page.
   * `cachePercent`: CACHE_PRICE_PERCENT, or null when the deployment has no result cache.
   */
  constructor(
    private readonly available: ProviderAvailability,
    byok: ByokSettings,
    readonly health?: CatalogHealth,
    private readonly cachePercent: number | null = DEFAULT_CACHE_PRICE_PERCENT,
  ) {
    this.modelsPrefix = `{"data":${JSON.stringify(modelsData(available, null, cachePercent))},"request_id":`;
    const pricing = JSON.stringify(pricingBody(byok, cachePercent));
    this.pricingPrefix = `${pricing.slice(0, -1)},"request_id":`;
  }

  modelsJson(requestId: string): string {
    if (this.health !== undefined) {
      // The body is made again only when a model's status changed.
      const statuses = this.health.statuses();
      const key = Object.values(statuses).join(',');
      if (key !== this.statusKey) {
        this.statusKey = key;
        this.modelsPrefix = `{"data":${JSON.stringify(modelsData(this.available, statuses, this.cachePercent))},"request_id":`;
      }
    }
    return `${this.modelsPrefix}${JSON.stringify(requestId)}}`;
  }

  pricingJson(requestId: string): string {
    return `${this.pricingPrefix}${JSON.stringify(requestId)}}`;
  }
}
