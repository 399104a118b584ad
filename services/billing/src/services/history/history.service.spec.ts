import { AppError } from '@svc/errors';
import { encodeCursor, toHistoryPage } from '../../common/pages';
import type { PageMark } from '../../common/pages';
import type { AttemptRow, HistoryRepository, PurchaseRow, SearchRow } from '../../stores/history.repository';
import { HistoryService } from './history.service';

function attempt(index: number, model: string, status: string, chargedMicros = 0): AttemptRow {
  return { requestId: 'req_x', attemptIndex: index, model, provider: model.split('/')[0] ?? '', source: 'platform', status, error: status === 'error' ? 'provider returned 500' : null, chargedMicros, timedOut: false, results: status === 'success' ? 10 : 0, cache: null, savedMicros: 0 };
}

function search(id: string, atMicros: bigint, attempts: AttemptRow[]): SearchRow {
  return { requestId: id, keyId: 'key_1', filters: null, kind: 'search', chargedMicros: attempts.reduce((sum, a) => sum + a.chargedMicros, 0), settledAt: new Date(Number(atMicros / 1000n)), mark: { atMicros, id }, attempts };
}

/** A repository over fixed rows that records what it was asked. */
function repositoryOf(searches: SearchRow[], purchases: PurchaseRow[] = []): { repo: HistoryRepository; asked: { limit: number; after: PageMark | null }[] } {
  const asked: { limit: number; after: PageMark | null }[] = [];
  const repo = {
    searches: async (_account: string, limit: number, after: PageMark | null) => {
      asked.push({ limit, after });
      return searches.slice(0, limit);
    },
    purchases: async (_account: string, limit: number) => purchases.slice(0, limit),
    dailyByModel: async () => [],
  } as unknown as HistoryRepository;
  return { repo, asked };
}

describe('the account history service', () => {
  it("names a search's model by the attempt that answered, else the last one tried, and its status by whether any answered", async () => {
    const { repo } = repositoryOf([
      search('req_a', 3n, [attempt(0, 'exa/fast', 'error'), attempt(1, 'brave/web', 'success', 6000), attempt(2, 'tavily/basic', 'skipped')]),
      search('req_b', 2n, [attempt(0, 'exa/fast', 'error'), attempt(1, 'brave/web', 'error'), attempt(2, 'tavily/basic', 'skipped')]),
      search('req_c', 1n, [attempt(0, 'exa/fast', 'skipped')]),
    ]);
    const page = await new HistoryService(repo).activity('acct_1', toHistoryPage({}));
    expect(page.data.map((a) => [a.request_id, a.model, a.status, a.cost_usd])).toEqual([
      ['req_a', 'brave/web', 'success', 0.006],
      ['req_b', 'brave/web', 'failed', 0],
      ['req_c', 'exa/fast', 'failed', 0],
    ]);
    expect(page.data[0]?.attempts.map((a) => [a.model, a.status, a.error])).toEqual([
      ['exa/fast', 'error', 'provider returned 500'], ['brave/web', 'success', null], ['tavily/basic', 'skipped', null],
    ]);
    expect(page.next_cursor).toBeNull();
  });

  it("gives each search the filters it was made with, or null without", async () => {
    const filters = { include_domains: ['example.org'], published_after: '2025-01-31' };
    const { repo } = repositoryOf([{ ...search('req_f', 2n, [attempt(0, 'exa/fast', 'success', 9000)]), filters }, search('req_n', 1n, [attempt(0, 'exa/fast', 'success', 9000)])]);
    const page = await new HistoryService(repo).activity('acct_1', toHistoryPage({}));
    expect(page.data.map((a) => [a.request_id, a.filters])).toEqual([['req_f', filters], ['req_n', null]]);
  });

  it('asks for one row more than the page and gives a cursor naming the last row shown only when there is more', async () => {
    const rows = [search('req_3', 30n, []), search('req_2', 20n, []), search('req_1', 10n, [])];
    const { repo, asked } = repositoryOf(rows);
    const service = new HistoryService(repo);
    const first = await service.activity('acct_1', toHistoryPage({ limit: '2' }));
    expect(asked[0]).toEqual({ limit: 3, after: null });
    expect(first.data.map((a) => a.request_id)).toEqual(['req_3', 'req_2']);
    expect(first.next_cursor).toBe(encodeCursor({ atMicros: 20n, id: 'req_2' }));
    await service.activity('acct_1', toHistoryPage({ limit: '2', cursor: first.next_cursor ?? '' }));
    expect(asked[1]).toEqual({ limit: 3, after: { atMicros: 20n, id: 'req_2' } });
    const all = await service.activity('acct_1', toHistoryPage({ limit: '3' }));
    expect(all.next_cursor).toBeNull();
  });

  it('refuses a cursor that is base64url but not one of ours with 400 invalid_request', () => {
    for (const cursor of ['Zm9v', Buffer.from('12|req_a|x').toString('base64url'), Buffer.from('x|req_a').toString('base64url')]) {
      expect(() => toHistoryPage({ cursor })).toThrow(AppError);
    }
    expect(toHistoryPage({ cursor: encodeCursor({ atMicros: 1_764_000_000_123_456n, id: 'chk_abc' }) }).after).toEqual({ atMicros: 1_764_000_000_123_456n, id: 'chk_abc' });
  });

  it('shows purchases in USD with their refunds and disputes', async () => {
    const { repo } = repositoryOf([], [{
      id: 'chk_1', status: 'paid', creditMicros: 20_000_000, refundedMicros: 5_000_000, disputedMicros: 0,
      createdAt: new Date('2026-11-24T10:00:00Z'), paidAt: new Date('2026-11-24T10:01:00Z'), mark: { atMicros: 1n, id: 'chk_1' },
    }]);
    const page = await new HistoryService(repo).purchases('acct_1', toHistoryPage({}));
    expect(page).toEqual({
      data: [{ id: 'chk_1', amount_usd: 20, status: 'paid', created_at: '2026-11-24T10:00:00.000Z', paid_at: '2026-11-24T10:01:00.000Z', refunded_usd: 5, disputed_usd: 0 }],
      next_cursor: null,
    });
  });
});
