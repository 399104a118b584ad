import type { Provider } from '@svc/contracts';
import { ProviderRegistry } from './provider-registry';
import type { ProviderOutcome, ProviderSearchRequest, SearchProvider } from './search-provider';
import { TimedProvider } from './timed-provider';
import type { ProviderCallObserver } from './timed-provider';

function recording(): ProviderCallObserver & { calls: { provider: Provider; outcome: { readonly ok: true } | ProviderOutcome; durationMs: number }[] } {
  const calls: { provider: Provider; outcome: { readonly ok: true } | ProviderOutcome; durationMs: number }[] = [];
  return { calls, providerCall: (provider, outcome, durationMs) => calls.push({ provider, outcome, durationMs }) };
}

const REQUEST = { query: 'q', maxResults: 1, apiKey: 'k', timeoutMs: 1_000 } as unknown as ProviderSearchRequest;

describe('TimedProvider', () => {
  it('reports each call that returned, with its outcome and how long it took, and returns the outcome unchanged', async () => {
    const outcome: ProviderOutcome = { ok: false, kind: 'timeout', error: 'timed out', status: null };
    let closed = false;
    const inner: SearchProvider = {
      provider: 'exa',
      search: () => new Promise((resolve) => setTimeout(() => resolve(outcome), 30)),
      close: async () => {
        closed = true;
      },
    };
    const observer = recording();
    const timed = new TimedProvider(inner, observer);
    expect(timed.provider).toBe('exa');
    expect(await timed.search(REQUEST)).toBe(outcome);
    expect(observer.calls).toHaveLength(1);
    expect(observer.calls[0]).toMatchObject({ provider: 'exa', outcome });
    expect(observer.calls[0]?.durationMs).toBeGreaterThanOrEqual(25);
    await timed.close();
    expect(closed).toBe(true);
  });

  it('reports nothing for a call that threw', async () => {
    const observer = recording();
    const timed = new TimedProvider({ provider: 'brave', search: () => Promise.reject(new Error('boom')), close: () => Promise.resolve() }, observer);
    await expect(timed.search(REQUEST)).rejects.toThrow('boom');
    expect(observer.calls).toEqual([]);
  });

  it('is what the registry hands out when it has an observer, and only then', async () => {
    const settings = { brave: {}, exa: {}, tavily: {} };
    const observed = new ProviderRegistry(settings, recording());
    const plain = new ProviderRegistry(settings);
    try {
      for (const provider of ['brave', 'exa', 'tavily'] as const) {
        expect(observed.adapter(provider)).toBeInstanceOf(TimedProvider);
        expect(observed.adapter(provider).provider).toBe(provider);
        expect(plain.adapter(provider)).not.toBeInstanceOf(TimedProvider);
      }
    } finally {
      await observed.close();
      await plain.close();
    }
  });
});
