import { waitFor } from '@svc/test-kit';
import type { SimStats } from '../src/stats';
import { simulatorForTests } from './simulator';

describe('provider-sim: a provider failing as a whole (PUT/DELETE /_sim/outage/:provider)', () => {
  const sim = simulatorForTests({ listen: true });

  const control = (method: 'PUT' | 'DELETE', provider: string, kind?: string) =>
    fetch(`${sim.base}/_sim/outage/${provider}`, { method, ...(kind === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind }) }) });
  const exa = (query: string, key = 'sim-exa-key', signal?: AbortSignal) =>
    fetch(`${sim.base}/exa/search`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ query }), signal });
  const brave = () => fetch(`${sim.base}/brave/res/v1/web/search?q=cats`, { headers: { 'x-subscription-token': 'sim-brave-key' } });
  const stats = async (): Promise<SimStats> => (await fetch(`${sim.base}/_sim/stats`)).json() as Promise<SimStats>;

  afterEach(async () => {
    for (const provider of ['brave', 'exa', 'tavily']) await control('DELETE', provider);
  });

  it('error500 and error429: every call of that provider, whatever its query or key, until DELETE; the others answer', async () => {
    expect((await control('PUT', 'exa', 'error500')).status).toBe(200);
    expect((await exa('cats')).status).toBe(500);
    expect((await exa('cats sim:exa=ok', 'wrong-key')).status).toBe(500);
    expect((await brave()).status).toBe(200);
    expect(await (await fetch(`${sim.base}/_sim/outages`)).json()).toEqual({ exa: 'error500' });
    await control('PUT', 'exa', 'error429');
    const limited = await exa('cats');
    expect(limited.status).toBe(429);
    await control('DELETE', 'exa');
    expect((await exa('cats')).status).toBe(200);
    expect(await (await fetch(`${sim.base}/_sim/outages`)).json()).toEqual({});
  });

  it('timeout: every call hangs until the client goes away', async () => {
    await control('PUT', 'exa', 'timeout');
    const controller = new AbortController();
    const pending = exa('cats', 'sim-exa-key', controller.signal).then(() => 'answered', (error: Error) => error.name);
    await waitFor('the call to be in flight', async () => ((await stats()).exa.in_flight === 1 ? true : undefined));
    controller.abort();
    expect(await pending).toBe('AbortError');
    await waitFor('the call to end', async () => ((await stats()).exa.in_flight === 0 ? true : undefined));
  });

  it('refuses an unknown provider (404) and an unknown kind (400)', async () => {
    expect((await control('PUT', 'google', 'timeout')).status).toBe(404);
    expect((await control('PUT', 'exa', 'slow')).status).toBe(400);
    expect((await control('PUT', 'exa')).status).toBe(400);
    expect((await exa('cats')).status).toBe(200);
  });
});
