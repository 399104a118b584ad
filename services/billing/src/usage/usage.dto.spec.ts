import { AppError } from '@svc/errors';
import { parseUsageQuery } from './usage.dto';

const NOW = new Date('2026-03-15T23:59:59Z');
const day = (text: string): number => Date.parse(`${text}T00:00:00Z`);

describe('parseUsageQuery', () => {
  it('defaults to the 30 days ending today (UTC, inclusive), grouped by day', () => {
    expect(parseUsageQuery({}, NOW)).toEqual({ range: { from: day('2026-02-14'), to: day('2026-03-15') }, groupBy: 'day', keyId: null });
  });

  it('accepts a 366-day range and rejects 367 days', () => {
    expect(parseUsageQuery({ from: '2024-01-01', to: '2024-12-31' }, NOW).range.from).toBe(day('2024-01-01'));
    expect(() => parseUsageQuery({ from: '2024-01-01', to: '2025-01-01' }, NOW)).toThrow('at most 366 days');
  });

  it.each([
    [{ from: '2026-02-29' }, 'from must be a date'],
    [{ to: '2026-3-01' }, 'to must be a date'],
    [{ from: '2026-03-16' }, 'is after'],
    [{ group_by: 'hour' }, 'group_by'],
    [{ key_id: 'acct_AAAAAAAAAAAAAAAAAAAAAAAA' }, 'key_id'],
    [{ from: ['2026-01-01', '2026-01-02'] }, 'given once'],
  ])('rejects %j as invalid_request', (query, message) => {
    let caught: unknown;
    try {
      parseUsageQuery(query, NOW);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('invalid_request');
    expect((caught as AppError).message).toContain(message);
  });
});
