import { BraveAdapter } from './brave.adapter';
import { ExaAdapter } from './exa.adapter';
import { ProviderRegistry, providerSettingsFrom } from './provider-registry';
import { TavilyAdapter } from './tavily.adapter';

describe('ProviderRegistry', () => {
  it('reads base URLs and platform keys from the environment names; an unset key means not configured', async () => {
    const settings = providerSettingsFrom({ BRAVE_API_KEY: 'b', BRAVE_BASE_URL: 'http://127.0.0.1:9090/brave/res/v1', EXA_API_KEY: '', TAVILY_BASE_URL: 'http://t' });
    expect(settings).toEqual({ brave: { apiKey: 'b', baseUrl: 'http://127.0.0.1:9090/brave/res/v1' }, exa: {}, tavily: { baseUrl: 'http://t' } });
    const registry = new ProviderRegistry(settings);
    try {
      expect(registry.adapter('brave')).toBeInstanceOf(BraveAdapter);
      expect(registry.adapter('exa')).toBeInstanceOf(ExaAdapter);
      expect(registry.adapter('tavily')).toBeInstanceOf(TavilyAdapter);
      expect(registry.platformKey('brave')).toBe('b');
      expect(registry.platformKey('exa')).toBeUndefined();
      expect(registry.platformKey('tavily')).toBeUndefined();
    } finally {
      await registry.close();
    }
  });
});
