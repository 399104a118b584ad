import type { FastifyInstance } from 'fastify';
import { CATALOG, findModel } from '@svc/contracts';
import type { ModelSpec, Provider } from '@svc/contracts';
import { freePort, waitFor } from '@svc/test-kit';
import { buildSimulator } from '../../../tools/provider-sim/src/server';
import { ProviderRegistry } from '../src/providers';
import type { ProviderFailureKind, ProviderOutcome } from '../src/providers';

/** The real adapters against the real simulator over loopback HTTP. */

const KEYS: Record<Provider, string> = { brave: 'sim-brave-key', exa: 'sim-exa-key', tavily: 'tvly-sim-key' };
const MODELS = CATALOG.map((model) => model.id);

function model(id: string): ModelSpec {
  const found = findModel(id);
  if (found === undefined) throw new Error(`no model ${id}`);
  return found;
}

interface Stats {
  brave: { in_flight: number; total: number };
  exa: { in_flight: number; total: number };
  tavily: { in_flight: number; total: number };
}

describe('provider adapters against the provider simulator', () => {
  let sim: FastifyInstance;
  let base: string;
  let registry: ProviderRegistry;

  beforeAll(async () => {
    sim = buildSimulator();
    const port = await freePort();
    await sim.listen({ port, host: '127.0.0.1' });
    base = `http://127.0.0.1:${port}`;
    registry = new ProviderRegistry({
      brave: { baseUrl: `${base}/brave/res/v1`, apiKey: KEYS.brave },
      exa: { baseUrl: `${base}/exa`, apiKey: KEYS.exa },
      tavily: { baseUrl: `${base}/tavily`, apiKey: KEYS.tavily },
    });
  });
  afterAll(async () => {
    await registry.close();
    await sim.close();
  });

  const stats = async (): Promise<Stats> => (await fetch(`${base}/_sim/stats`)).json() as Promise<Stats>;

  const search = (id: string, query: string, options: { maxResults?: number; timeoutMs?: number; apiKey?: string } = {}): Promise<ProviderOutcome> => {
    const spec = model(id);
    return registry.adapter(spec.provider).search({
      query,
      model: spec,
      maxResults: options.maxResults ?? 5,
      apiKey: options.apiKey ?? registry.platformKey(spec.provider) ?? '',
      timeoutMs: options.timeoutMs ?? 15_000,
    });
  };

  it.each(MODELS)('%s answers the requested number of normalized results, the same for the same query', async (id) => {
    const first = await search(id, 'open source search engines', { maxResults: 7 });
    const again = await search(id, 'open source search engines', { maxResults: 7 });
    if (!first.ok) throw new Error(`expected results, got ${first.kind}`);
    expect(first.results).toHaveLength(7);
    expect(first.results.map((result) => result.position)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const result of first.results) {
      expect(result.url).toMatch(/^https:\/\//);
      expect(result.title).not.toBe('');
      expect(result.snippet).not.toBe('');
      expect(result.snippet).not.toContain('<');
      if (result.published_at !== null) expect(result.published_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
    }
    expect(again).toEqual(first);
  });

  it('scores: Brave none, Exa auto none, Exa deep and Tavily numbers; Brave and Exa give dates', async () => {
    const brave = await search('brave/web', 'scores');
    const auto = await search('exa/auto', 'scores');
    const deep = await search('exa/deep', 'scores');
    const tavily = await search('tavily/basic', 'scores');
    if (!brave.ok || !auto.ok || !deep.ok || !tavily.ok) throw new Error('expected results');
    expect(brave.results.every((result) => result.score === null && result.published_at !== null)).toBe(true);
    expect(auto.results.every((result) => result.score === null && result.published_at !== null)).toBe(true);
    expect(deep.results.every((result) => typeof result.score === 'number')).toBe(true);
    expect(tavily.results.every((result) => typeof result.score === 'number')).toBe(true);
  });

  it.each([
    ['brave/web', 100, 20],
    ['brave/news', 100, 50],
    ['exa/fast', 100, 100],
    ['tavily/advanced', 100, 20],
  ])('%s with max_results %i is served with the cap (%i results) and no upstream error', async (id, maxResults, expected) => {
    const outcome = await search(id, 'capped', { maxResults });
    expect(outcome.ok && outcome.results.length).toBe(expected);
  });

  const failures: [string, ProviderFailureKind][] = [
    ['error500', 'server_error'],
    ['error429', 'rate_limited'],
    ['quota', 'quota'],
    ['badkey', 'bad_key'],
    ['malformed', 'malformed'],
  ];
  const cases = MODELS.flatMap((id) => failures.map(([behaviour, kind]) => [id, behaviour, kind] as const));

  it.each(cases)('%s with sim:*=%s is classified %s, in our own words', async (id, behaviour, kind) => {
    const outcome = await search(id, `failing query sim:*=${behaviour}`);
    expect(outcome).toMatchObject({ ok: false, kind });
    if (outcome.ok) return;
    expect(outcome.error).toMatch(/^provider /);
  });

  it.each(MODELS)('%s with sim:<provider>=empty answers zero results, and slow<ms> still answers', async (id) => {
    const provider = model(id).provider;
    expect(await search(id, `nothing sim:${provider}=empty`)).toEqual({ ok: true, results: [] });
    const slow = await search(id, `patience sim:${provider}=slow25`);
    expect(slow.ok && slow.results.length).toBe(5);
  });

  it.each(['brave', 'exa', 'tavily'] as const)('a wrong %s key is bad_key', async (provider) => {
    const id = CATALOG.find((spec) => spec.provider === provider)?.id ?? '';
    expect(await search(id, 'hello', { apiKey: 'tvly-not-the-key' })).toMatchObject({ ok: false, kind: 'bad_key' });
  });

  it('one search is exactly one upstream call, counted at the simulator', async () => {
    await fetch(`${base}/_sim/reset`, { method: 'POST' });
    await search('brave/news', 'count me');
    await search('exa/auto', 'count me sim:exa=error500');
    await search('tavily/basic', 'count me sim:*=quota');
    await search('tavily/advanced', 'count me');
    expect(await stats()).toEqual({
      brave: { in_flight: 0, total: 1, max_in_flight: 1 },
      exa: { in_flight: 0, total: 1, max_in_flight: 1 },
      tavily: { in_flight: 0, total: 2, max_in_flight: 1 },
    });
  });

  it.each(MODELS)('%s with sim:*=timeout returns a timeout after timeoutMs and closes the upstream request', async (id) => {
    const provider = model(id).provider;
    const outcome = await search(id, 'never sim:*=timeout', { timeoutMs: 250 });
    expect(outcome).toEqual({ ok: false, kind: 'timeout', error: 'provider did not answer within 250 ms', status: null });
    await waitFor(`${provider} request to leave the simulator`, async () => ((await stats())[provider].in_flight === 0 ? true : undefined));
  });
});
