import { freePort, waitFor } from '@svc/test-kit';
import { parseQuery } from '../src/directives';
import type { SimStats } from '../src/stats';
import { buildSimulator } from '../src/server';
import { simulatorForTests } from './simulator';

describe('provider-sim: directives', () => {
  it('strips every directive and picks the provider-specific one over sim:*', () => {
    expect(parseQuery('sim:*=error500 cats sim:exa=slow25 dogs', 'exa')).toEqual({ ok: true, query: 'cats dogs', behaviour: { kind: 'slow', ms: 25 } });
    expect(parseQuery('sim:*=error500 cats sim:exa=slow25', 'brave')).toEqual({ ok: true, query: 'cats', behaviour: { kind: 'error500' } });
    expect(parseQuery('plain', 'tavily')).toEqual({ ok: true, query: 'plain', behaviour: { kind: 'ok' } });
  });

  it('keeps the rest of the query exactly as it arrived, as a provider reads it: only ASCII spaces separate directive words', () => {
    for (const text of ['best\uFEFFvpn', 'best\u00a0vpn', 'best\u3000vpn', 'best\u2003vpn', 'best  vpn', 'cafe\u0301', 'caf\u00e9', ' padded ']) {
      expect(parseQuery(text, 'exa')).toEqual({ ok: true, query: text, behaviour: { kind: 'ok' } });
      expect(parseQuery(`${text} sim:exa=slow25`, 'exa')).toEqual({ ok: true, query: text, behaviour: { kind: 'slow', ms: 25 } });
    }
  });

  it('rejects unknown behaviours and targets', () => {
    expect(parseQuery('x sim:exa=slowly', 'exa').ok).toBe(false);
    expect(parseQuery('x sim:google=ok', 'exa').ok).toBe(false);
    expect(parseQuery('x sim:exa=slow999999999', 'exa').ok).toBe(false);
  });
});

describe('provider-sim over real HTTP: timeouts, slow answers and counters', () => {
  const sim = simulatorForTests({ listen: true });

  const stats = async (): Promise<SimStats> => (await fetch(`${sim.base}/_sim/stats`)).json() as Promise<SimStats>;
  const exa = (query: string, signal?: AbortSignal) =>
    fetch(`${sim.base}/exa/search`, {
      method: 'POST',
      headers: { 'x-api-key': 'sim-exa-key', 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
      signal,
    });

  it('counts requests per provider in total, and POST /_sim/reset zeroes the totals', async () => {
    await fetch(`${sim.base}/_sim/reset`, { method: 'POST' });
    await exa('one');
    await exa('two sim:exa=error500');
    await fetch(`${sim.base}/tavily/search`, { method: 'POST', headers: { authorization: 'Bearer tvly-wrong' }, body: '{}' });
    // One request at a time: the high-water mark is 1 where anything was sent.
    expect(await stats()).toEqual({
      brave: { in_flight: 0, total: 0, max_in_flight: 0 }, exa: { in_flight: 0, total: 2, max_in_flight: 1 }, tavily: { in_flight: 0, total: 1, max_in_flight: 1 },
    });
    await fetch(`${sim.base}/_sim/reset`, { method: 'POST' });
    expect((await stats()).exa.total).toBe(0);
    expect((await stats()).exa.max_in_flight).toBe(0);
  });

  it('sim:exa=timeout never answers: the request stays in flight until the client goes away', async () => {
    await fetch(`${sim.base}/_sim/reset`, { method: 'POST' });
    const controller = new AbortController();
    const pending = exa('hang sim:exa=timeout', controller.signal).then(
      () => 'answered',
      () => 'aborted',
    );
    await waitFor('the hanging request to be in flight', async () => ((await stats()).exa.in_flight === 1 ? true : undefined));
    controller.abort();
    expect(await pending).toBe('aborted');
    await waitFor('the hanging request to leave', async () => ((await stats()).exa.in_flight === 0 ? true : undefined));
  });

  it('sim:*=slow<ms> answers 200 with results after waiting, and a long wait is released when the client leaves', async () => {
    const quick = await exa('wait sim:*=slow20');
    expect(quick.status).toBe(200);
    expect(((await quick.json()) as { results: unknown[] }).results).toHaveLength(10);
    const controller = new AbortController();
    const pending = exa('wait sim:exa=slow600000', controller.signal).catch(() => undefined);
    await waitFor('the slow request to be in flight', async () => ((await stats()).exa.in_flight === 1 ? true : undefined));
    controller.abort();
    await pending;
    await waitFor('the slow request to leave', async () => ((await stats()).exa.in_flight === 0 ? true : undefined));
  });

  it('closing the simulator releases a request that hangs', async () => {
    const other = buildSimulator();
    const port = await freePort();
    await other.listen({ port, host: '127.0.0.1' });
    const pending = fetch(`http://127.0.0.1:${port}/brave/res/v1/web/search?q=${encodeURIComponent('x sim:brave=timeout')}`, {
      headers: { 'x-subscription-token': 'sim-brave-key' },
    }).then(
      () => 'answered',
      () => 'failed',
    );
    await waitFor('in flight', async () => {
      const response = await fetch(`http://127.0.0.1:${port}/_sim/stats`);
      return ((await response.json()) as SimStats).brave.in_flight === 1 ? true : undefined;
    });
    await other.close();
    expect(await pending).toBe('failed');
  });

  it('SIM_BASE_LATENCY_MS-style base latency still answers', async () => {
    const slowSim = buildSimulator({ baseLatencyMs: 5 });
    try {
      const response = await slowSim.inject({ method: 'POST', url: '/tavily/search', payload: { query: 'x' }, headers: { authorization: 'Bearer tvly-sim-key' } });
      expect(response.statusCode).toBe(200);
    } finally {
      await slowSim.close();
    }
  });
});
