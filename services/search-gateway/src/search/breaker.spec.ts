import type { Provider } from '@svc/contracts';
import { capturingLogger, failure, FakeMoney, FakeProviders, model, RECORD, SETTINGS } from '../../test/search-steps.fakes';
import type { ProviderFailureKind } from '../providers';
import { SearchService } from './search.service';
import type { SearchCall, SearchReply, SearchResult } from './search.result';
import type { SearchHealth } from './steps/search-steps';

/** The breaker's state as the gate reads it, and every outcome recorded. */
class FakeHealth implements SearchHealth {
  readonly blocked = new Map<Provider, number>();
  readonly recorded: string[] = [];
  readonly skips: Provider[] = [];

  blockedMs(provider: Provider): number {
    return this.blocked.get(provider) ?? -1;
  }

  skipped(provider: Provider): void {
    this.skips.push(provider);
  }

  record(provider: Provider, source: 'platform' | 'byok', modelId: string, outcome: 'ok' | ProviderFailureKind): void {
    this.recorded.push(`${provider}:${source}:${modelId}:${outcome}`);
  }
}

function service(health: FakeHealth, providers = new FakeProviders(), ownKeys: Record<string, string> | null = null) {
  const money = new FakeMoney();
  const { log } = capturingLogger();
  const keys = ownKeys === null ? null : { keysFor: () => ownKeys };
  const search = new SearchService(providers, money, SETTINGS, { countFailure: () => undefined }, log, keys, health);
  return { search, money, providers };
}

const call = (models: string[]): SearchCall => ({
  record: RECORD, requestId: 'req_b', request: { query: 'q', models: models.map(model), maxResults: 10, cache: 'default', cacheMaxAgeS: null, contents: 'none', maxCharsPerResult: 5_000, maxTotalChars: null }, idempotency: null, elapsedMs: () => 3,
});

function reply(result: SearchResult): SearchReply {
  if (result.kind !== 'reply') throw new Error(`refused: ${result.reason}`);
  return result;
}

describe('the breaker gate on the search path (docs/decisions/0027)', () => {
  it('an open provider is skipped as failing, charged nothing and not called; the fallback answers', async () => {
    const health = new FakeHealth();
    health.blocked.set('exa', 12_000);
    const { search, money, providers } = service(health);
    const result = reply(await search.search(call(['exa/auto', 'brave/web'])));
    expect(result.status).toBe(200);
    const body = JSON.parse(result.body);
    expect(body).toMatchObject({ model: 'brave/web', cost_usd: 0.006, attempts: [{ model: 'exa/auto', source: 'platform', status: 'skipped', error: 'provider unavailable (failing)' }] });
    expect(providers.requests.map((r) => r.model.provider)).toEqual(['brave']);
    // The first admission is Brave's: nothing was reserved for Exa.
    expect(money.calls[0]).toMatchObject({ method: 'admitFirst', lease: { provider: 'brave' }, reserve: { index: 1 } });
    expect(money.calls[1]).toMatchObject({ method: 'settle', settlement: { record: { chargedMicros: 6_000, attempts: [{ provider: 'exa', status: 'skipped', chargedMicros: 0, error: 'provider unavailable (failing)' }, { provider: 'brave', status: 'success' }] } } });
    expect(health.skips).toEqual(['exa']);
    expect(health.recorded).toEqual(['brave:platform:brave/web:ok']);
  });

  it('every model skipped by open breakers: 503 overloaded with Retry-After the shortest cool-down left, and no provider call, no money', async () => {
    const health = new FakeHealth();
    health.blocked.set('exa', 12_300);
    health.blocked.set('brave', 25_000);
    const { search, money, providers } = service(health);
    const result = reply(await search.search(call(['exa/auto', 'brave/web'])));
    expect(result.status).toBe(503);
    expect(result.retryAfterSeconds).toBe(13);
    expect(JSON.parse(result.body).error.code).toBe('overloaded');
    expect(providers.requests).toEqual([]);
    expect(money.methods).toEqual(['finish']);
  });

  it('a cool-down over but the probe not yet answered: still skipped, Retry-After 1', async () => {
    const health = new FakeHealth();
    health.blocked.set('exa', 0);
    const { search } = service(health);
    expect(reply(await search.search(call(['exa/auto']))).retryAfterSeconds).toBe(1);
  });

  it('an account\'s own key is judged apart: its attempt runs while the platform\'s breaker is open, and its outcome is recorded as byok', async () => {
    const health = new FakeHealth();
    health.blocked.set('exa', 5_000);
    const { search, providers } = service(health, new FakeProviders().answer('exa', failure('server_error')), { exa: 'own' });
    const result = reply(await search.search(call(['exa/auto', 'brave/web'])));
    expect(providers.requests.map((r) => r.apiKey)).toEqual(['own', 'pk-brave']);
    expect(JSON.parse(result.body).attempts).toEqual([
      { model: 'exa/auto', source: 'byok', status: 'error', error: expect.any(String) },
      { model: 'exa/auto', source: 'platform', status: 'skipped', error: 'provider unavailable (failing)' },
    ]);
    expect(health.recorded).toEqual(['exa:byok:exa/auto:server_error', 'brave:platform:brave/web:ok']);
  });

  it('a closed breaker changes nothing: the provider is called and its outcome recorded', async () => {
    const health = new FakeHealth();
    const { search } = service(health, new FakeProviders().answer('exa', failure('timeout', null)));
    const result = reply(await search.search(call(['exa/auto', 'brave/web'])));
    expect(JSON.parse(result.body).attempts[0]).toMatchObject({ model: 'exa/auto', status: 'error' });
    expect(health.recorded).toEqual(['exa:platform:exa/auto:timeout', 'brave:platform:brave/web:ok']);
  });
});
