import { PROVIDERS } from '@svc/contracts';
import type { Provider } from '@svc/contracts';
import { BraveAdapter } from './brave.adapter';
import { ExaAdapter } from './exa.adapter';
import type { ProviderHttpOptions } from './provider-http';
import type { SearchProvider } from './search-provider';
import { TavilyAdapter } from './tavily.adapter';

export interface ProviderSetting {
  /** Unset: the provider's public host (docs/providers.md). */
  readonly baseUrl?: string;
  /** The deployment's platform key; unset: the provider is not configured (BYOK may still serve it). */
  readonly apiKey?: string;
  readonly http?: ProviderHttpOptions;
}

export type ProviderSettings = Readonly<Record<Provider, ProviderSetting>>;

/** The three adapters, built once per process, and the platform keys they may use. */
export class ProviderRegistry {
  private readonly adapters: Readonly<Record<Provider, SearchProvider>>;

  constructor(private readonly settings: ProviderSettings) {
    this.adapters = {
      brave: new BraveAdapter({ baseUrl: settings.brave.baseUrl, http: settings.brave.http }),
      exa: new ExaAdapter({ baseUrl: settings.exa.baseUrl, http: settings.exa.http }),
      tavily: new TavilyAdapter({ baseUrl: settings.tavily.baseUrl, http: settings.tavily.http }),
    };
  }

  adapter(provider: Provider): SearchProvider {
    return this.adapters[provider];
  }

  /** The deployment's own key for the provider, or undefined when it has none. */
  platformKey(provider: Provider): string | undefined {
    const key = this.settings[provider].apiKey;
    return key === undefined || key === '' ? undefined : key;
  }

  async close(): Promise<void> {
    await Promise.all(PROVIDERS.map((provider) => this.adapters[provider].close()));
  }
}

/**
 * Settings from the environment (docs/development.md, "Environment"): BRAVE_API_KEY,
 * BRAVE_BASE_URL, EXA_API_KEY, EXA_BASE_URL, TAVILY_API_KEY, TAVILY_BASE_URL.
 */
export function providerSettingsFrom(env: Readonly<Record<string, string | undefined>>): ProviderSettings {
  const one = (prefix: string): ProviderSetting => {
    const baseUrl = env[`${prefix}_BASE_URL`];
    const apiKey = env[`${prefix}_API_KEY`];
    return {
      ...(baseUrl === undefined || baseUrl === '' ? {} : { baseUrl }),
      ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
    };
  };
  return { brave: one('BRAVE'), exa: one('EXA'), tavily: one('TAVILY') };
}
