import { BraveAdapter } from './brave.adapter';
import { ExaAdapter } from './exa.adapter';
import { ProviderRegistry } from './provider-registry';
import { TavilyAdapter } from './tavily.adapter';

describe('ProviderRegistry', () => {
  it('builds one adapter per provider; an unset or empty key means not configured', async () => {
    const registry = new ProviderRegistry({ brave: { apiKey: 'b', baseUrl: 'http://127.0.0.1:9090/brave/res/v1' }, exa: { apiKey: '' }, tavily: { baseUrl: 'http://t' } });
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
