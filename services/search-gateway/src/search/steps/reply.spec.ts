import { harness, model, searchCall, searchContext, SETTINGS, success } from '../../../test/search-steps.fakes';
import type { ProviderSuccess } from '../../providers';
import { claimValue, outcomeValue } from '../idempotency';
import { ResultsJson } from '../search.outcome';
import type { AttemptResult } from '../search.outcome';
import { buildReply, replay, withinBudget } from './reply';

const results = (success(1) as ProviderSuccess).results;
const answered = (id: string, charged: number): AttemptResult => ({ status: 'success', model: model(id), source: 'platform', results, reservedMicros: charged, chargedMicros: charged });
const timedOut: AttemptResult = { status: 'error', model: model('exa/auto'), source: 'platform', kind: 'timeout', error: 'provider timed out', reservedMicros: 9_000, chargedMicros: 9_000 };
const blocked = (id: string, reason: 'limit' | 'balance', price: number): AttemptResult => ({ status: 'skipped', model: model(id), source: 'platform', reason, priceMicros: price });
const rateLimit = { limit: 5, remaining: 2 };

describe('reply', () => {
  describe('buildReply', () => {
    describe('200: a model answered', () => {
      it('its results, the whole cost (a timed-out attempt\'s base price too), the attempts before it, the latency', () => {
        const attempts = [timedOut, answered('exa/fast', 9_000)];
        const reply = buildReply('req_r', attempts, 12.6, rateLimit);
        expect(reply).toMatchObject({ kind: 'reply', status: 200, requestId: 'req_r', rateLimit, attempts });
        expect(JSON.parse(reply.body)).toEqual({
          request_id: 'req_r', model: 'exa/fast', provider: 'exa', source: 'platform', results, cost_usd: 0.018,
          attempts: [{ model: 'exa/auto', source: 'platform', status: 'error', error: 'provider timed out', cost_usd: 0.009 }],
          latency_ms: 13,
          cache: { status: 'off', age_s: 0 },
        });
      });
    });

    describe('200 with max_total_chars', () => {
      const page = (i: number, text: string) => ({ position: i, title: 'tt', url: `https://x.test/${i}`, snippet: 'ss', published_at: null, score: null, text, truncated: false });

      it('keeps results whole while they fit, cuts the text of the one that crosses, drops the rest, and says truncated', () => {
        const kept = withinBudget([page(1, 'a'.repeat(10)), page(2, 'b'.repeat(10)), page(3, 'c')], 20);
        expect(kept).toEqual({ results: [page(1, 'a'.repeat(10)), { ...page(2, 'bb'), truncated: true }], truncated: true });
        expect(withinBudget([page(1, 'abc')], 7)).toEqual({ results: [page(1, 'abc')], truncated: false });
      });

      it('in the reply: truncated true at the end of the body (absent when nothing was cut), from a cache hit\'s text too', () => {
        const long = [page(1, 'x'.repeat(50)), page(2, 'y'.repeat(50))];
        const attempt: AttemptResult = { status: 'success', model: model('exa/fast'), source: 'platform', results: new ResultsJson(2, JSON.stringify(long)), reservedMicros: 9_000, chargedMicros: 9_000 };
        const cut = JSON.parse(buildReply('req_b', [attempt], 1, undefined, 60).body) as { results: { text: string }[]; truncated?: boolean; cost_usd: number };
        expect(cut.results.map((r) => r.text.length)).toEqual([50, 2]);
        expect(cut.truncated).toBe(true);
        expect(cut.cost_usd).toBe(0.009);
        const whole = JSON.parse(buildReply('req_b', [attempt], 1, undefined, 1_000).body) as Record<string, unknown>;
        expect(whole).not.toHaveProperty('truncated');
        expect(buildReply('req_b', [attempt], 1, undefined, null).body).toBe(buildReply('req_b', [attempt], 1, undefined).body);
      });
    });

    it('results given as JSON text (a cache hit\'s stored answer) make the same body, byte for byte, as the array they stand for', () => {
      const asArray = buildReply('req_r', [answered('exa/fast', 900)], 3, rateLimit);
      const asText = buildReply('req_r', [{ status: 'success', model: model('exa/fast'), source: 'platform', results: new ResultsJson(results.length, JSON.stringify(results)), reservedMicros: 900, chargedMicros: 900 }], 3, rateLimit);
      expect(asText.body).toBe(asArray.body);
      expect(JSON.parse(asText.body).results).toEqual(results);
    });

    describe('402: money blocked every model', () => {
      it('insufficient_credits with the cheapest price needed', () => {
        const reply = buildReply('req_r', [blocked('tavily/basic', 'balance', 10_000), blocked('exa/fast', 'balance', 9_000)], 1, undefined);
        expect(reply.status).toBe(402);
        expect(JSON.parse(reply.body)).toEqual({ error: { code: 'insufficient_credits', message: 'the credit balance cannot cover any of the requested models', request_id: 'req_r', needed_usd: 0.009 } });
      });

      it('key_limit_exceeded as soon as one was the key\'s limit', () => {
        const reply = buildReply('req_r', [blocked('tavily/basic', 'limit', 10_000)], 1, rateLimit);
        expect(JSON.parse(reply.body).error).toMatchObject({ code: 'key_limit_exceeded', message: 'this search would take the key past its credit limit', needed_usd: 0.01 });
        expect(reply.rateLimit).toBe(rateLimit);
      });
    });

    describe('503: every other model at capacity', () => {
      it('overloaded', () => {
        const reply = buildReply('req_r', [{ status: 'skipped', model: model('exa/fast'), source: 'platform', reason: 'capacity', priceMicros: 9_000 }], 1, undefined);
        expect(reply.status).toBe(503);
        expect(JSON.parse(reply.body).error).toEqual({ code: 'overloaded', message: 'every allowed model is at capacity; retry shortly', request_id: 'req_r' });
      });
    });

    describe('400: no model can honour the filters', () => {
      const refused = (id: string, filters: ('include_domains' | 'safesearch')[]): AttemptResult => ({ status: 'skipped', model: model(id), source: null, reason: 'unsupported_filter', priceMicros: 5_000, filters });

      it('unsupported_filter naming each model and the filters it cannot honour', () => {
        const reply = buildReply('req_r', [refused('brave/web', ['include_domains']), refused('exa/fast', ['safesearch'])], 1, undefined);
        expect(reply.status).toBe(400);
        expect(JSON.parse(reply.body)).toEqual({
          error: {
            code: 'unsupported_filter', request_id: 'req_r',
            message: 'no requested model can honour every filter sent: brave/web (include_domains), exa/fast (safesearch)',
            attempts: [
              { model: 'brave/web', status: 'skipped', error: 'unsupported filter: include_domains' },
              { model: 'exa/fast', status: 'skipped', error: 'unsupported filter: safesearch' },
            ],
          },
        });
      });

      it('a skip for a filter beside another failure is 502 all_providers_failed, with the reason in the attempts', () => {
        const reply = buildReply('req_r', [refused('brave/web', ['include_domains']), timedOut], 1, undefined);
        expect(reply.status).toBe(502);
        expect(JSON.parse(reply.body).error.attempts[0]).toEqual({ model: 'brave/web', status: 'skipped', error: 'unsupported filter: include_domains' });
      });
    });

    describe('502: anything else', () => {
      it('all_providers_failed with every attempt', () => {
        const reply = buildReply('req_r', [timedOut], 1, undefined);
        expect(reply.status).toBe(502);
        expect(JSON.parse(reply.body).error.attempts).toEqual([{ model: 'exa/auto', source: 'platform', status: 'error', error: 'provider timed out', cost_usd: 0.009 }]);
      });
    });
  });

  describe('replay', () => {
    const idempotency = { keyDigest: 'kd', bodyDigest: 'bd' };
    const setup = () => {
      const h = harness(SETTINGS);
      return { ...h, ctx: searchContext(h.steps, searchCall({ idempotency, requestId: 'req_copy' })) };
    };

    describe('reply: the first request finished', () => {
      it('its status, body and request id at once, none of its attempts, this request\'s rate state', async () => {
        const { steps, money, ctx } = setup();
        const result = await replay(steps, ctx, outcomeValue('req_first', 'bd', 402, '{"error":{}}'), rateLimit);
        expect(result).toEqual({ kind: 'reply', status: 402, body: '{"error":{}}', requestId: 'req_first', rateLimit, attempts: undefined });
        expect(money.calls).toEqual([]);
      });

      it('polls while the first runs', async () => {
        const { steps, money, ctx } = setup();
        money.idempotencyAnswers.push(claimValue('req_first', 'bd'), outcomeValue('req_first', 'bd', 200, '{}'));
        expect(await replay(steps, ctx, claimValue('req_first', 'bd'), undefined)).toMatchObject({ kind: 'reply', status: 200, requestId: 'req_first' });
        expect(money.methods).toEqual(['readIdempotency', 'readIdempotency']);
      });
    });

    describe('refused: body mismatch', () => {
      it('400 invalid_request under this request\'s id', async () => {
        const { steps, ctx } = setup();
        expect(await replay(steps, ctx, outcomeValue('req_first', 'other', 200, '{}'), undefined)).toEqual({
          kind: 'refused', reason: 'body_mismatch', code: 'invalid_request', message: 'this Idempotency-Key was used with a different request body', retryAfterSeconds: undefined, requestId: 'req_copy',
        });
      });
    });

    describe('refused: the first is still running', () => {
      it('503 after the bound, or at once when the stored value is gone or unreadable', async () => {
        const { steps, money, ctx } = setup();
        const running = claimValue('req_first', 'bd');
        money.idempotencyAnswers.push(running, running, running, running, running, running, running, running, running, running);
        expect(await replay(steps, { ...ctx, boundMs: 5 }, running, undefined)).toMatchObject({ kind: 'refused', reason: 'first_running', code: 'overloaded', retryAfterSeconds: 1, requestId: 'req_copy' });
        const reads = money.methods.length;
        expect(reads).toBeGreaterThan(0);
        expect(await replay(steps, ctx, 'not json', undefined)).toMatchObject({ kind: 'refused', reason: 'first_running' });
        expect(money.methods.length).toBe(reads);
      });
    });

    describe('fault', () => {
      it('a search without an Idempotency-Key cannot replay', async () => {
        const h = harness();
        await expect(replay(h.steps, searchContext(h.steps), 'x', undefined)).rejects.toThrow('replay without an idempotency key');
      });
    });
  });
});
