import { AppError } from '@svc/errors';
import { validateDto } from '@svc/http-edge';
import { toUsageQuery, UsageQueryDto } from './usage.dto';

async function parseUsageQuery(query: Record<string, unknown>, now: Date): Promise<ReturnType<typeof toUsageQuery>> {
  return toUsageQuery(await validateDto(UsageQueryDto, query, 'query'), now);
}

const NOW = new Date('2026-03-15T23:59:59Z');
const day = (text: string): number => Date.parse(`${text}T00:00:00Z`);

describe('parseUsageQuery', () => {
  it('defaults to the 30 days ending today (UTC, inclusive), grouped by day', async () => {
    expect(await parseUsageQuery({}, NOW)).toEqual({ range: { from: day('2026-02-14'), to: day('2026-03-15') }, groupBy: 'day', keyId: null });
  });

  it('accepts a 366-day range and rejects 367 days', async () => {
    expect((await parseUsageQuery({ from: '2024-01-01', to: '2024-12-31' }, NOW)).range.from).toBe(day('2024-01-01'));
    await expect(parseUsageQuery({ from: '2024-01-01', to: '2025-01-01' }, NOW)).rejects.toThrow('at most 366 days');
  });

  it('a default range that would start before 0001-01-01 starts there (the first valid day as `to`)', async () => {
    expect((await parseUsageQuery({ to: '0001-01-01' }, NOW)).range).toEqual({ from: day('0001-01-01'), to: day('0001-01-01') });
    expect((await parseUsageQuery({ to: '0001-01-05' }, NOW)).range).toEqual({ from: day('0001-01-01'), to: day('0001-01-05') });
    expect((await parseUsageQuery({ to: '0001-01-30' }, NOW)).range).toEqual({ from: day('0001-01-01'), to: day('0001-01-30') });
    expect((await parseUsageQuery({ to: '0001-01-31' }, NOW)).range).toEqual({ from: day('0001-01-02'), to: day('0001-01-31') });
  });

  it.each([
    [{ from: '2026-02-29' }, 'from must be a date'],
    [{ to: '2026-3-01' }, 'to must be a date'],
    [{ from: '2026-03-16' }, 'is after'],
    [{ group_by: 'hour' }, 'group_by'],
    [{ key_id: 'acct_AAAAAAAAAAAAAAAAAAAAAAAA' }, 'key_id'],
    [{ from: ['2026-01-01', '2026-01-02'] }, 'given once'],
    [{ to: '2026-03-01\u0000' }, 'U+0000'],
    [{ other: '1' }, 'unknown query parameter "other"'],
  ])('rejects %j as invalid_request', async (query, message) => {
    const caught: unknown = await parseUsageQuery(query, NOW).then(() => undefined, (error: unknown) => error);
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('invalid_request');
    expect((caught as AppError).message).toContain(message);
  });
});
