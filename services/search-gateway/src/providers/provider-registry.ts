import { PROVIDERS } from '@svc/contracts';
import type { Provider } from '@svc/contracts';
import { BraveAdapter } from './brave.adapter';
import { ExaAdapter, ExaContentsAdapter } from './exa.adapter';
import type { ProviderHttpOptions } from './provider-http';
import type { ExtractProvider, SearchProvider } from './search-provider';
import { TavilyAdapter, TavilyExtractAdapter } from './tavily.adapter';
import { TimedExtractor, TimedProvider } from './timed-provider';
import type { ProviderCallObserver } from './timed-provider';

export interface ProviderSetting {
  /** Unset: the provider's public host (docs/providers.md). */
  readonly baseUrl?: string;
  /** The deployment's platform key; unset: the provider is not configured (BYOK may still serve it). */
  readonly apiKey?: string;
  readonly http?: ProviderHttpOptions;
}

export type ProviderSettings = Readonly<Record<Provider, ProviderSetting>>;

/**
 * The three adapters, built once per process, and the platform keys they may use. With an
 * `observer`, each adapter is wrapped in a TimedProvider at construction: every call is timed.
 */
export class ProviderRegistry {
  private readonly adapters: Readonly<Record<Provider, SearchProvider>>;
  /** The extract adapters (Exa `/contents`, Tavily `/extract`); Brave has none. */
  private readonly extractors: Readonly<Partial<Record<Provider, ExtractProvider>>>;

  constructor(private readonly settings: ProviderSettings, observer?: ProviderCallObserver) {
    const timed = (adapter: SearchProvider): SearchProvider => (observer === undefined ? adapter : new TimedProvider(adapter, observer));
    const timedExtractor = (adapter: ExtractProvider): ExtractProvider => (observer === undefined ? adapter : new TimedExtractor(adapter, observer));
    this.adapters = {
      brave: timed(new BraveAdapter({ baseUrl: settings.brave.baseUrl, http: settings.brave.http })),
      exa: timed(new ExaAdapter({ baseUrl: settings.exa.baseUrl, http: settings.exa.http })),
      tavily: timed(new TavilyAdapter({ baseUrl: settings.tavily.baseUrl, http: settings.tavily.http })),
    };
    this.extractors = {
      exa: timedExtractor(new ExaContentsAdapter({ baseUrl: settings.exa.baseUrl, http: settings.exa.http })),
      tavily: timedExtractor(new TavilyExtractAdapter({ baseUrl: settings.tavily.baseUrl, http: settings.tavily.http })),
    };
  }

  adapter(provider: Provider): SearchProvider {
    return this.adapters[provider];
  }

  /** The provider's extract adapter, or undefined for a provider without one. */
  extractor(provider: Provider): ExtractProvider | undefined {
    return this.extractors[provider];
  }

  /** The deployment's own key for the provider, or undefined when it has none. */
  platformKey(provider: Provider): string | undefined {
    const key = this.settings[provider].apiKey;
    return key === undefined || key === '' ? undefined : key;
  }

  async close(): Promise<void> {
    await Promise.all(PROVIDERS.map((provider) => this.adapters[provider].close()));
    await Promise.all(Object.values(this.extractors).map((extractor) => extractor.close()));
  }
}
