import type { AuditEntryView } from '@svc/contracts';
import { decodeAuditCursor, newestFirst } from '@svc/http-edge';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';
import type { AuditRepository } from './audit.repository';
import { AuditService } from './audit.service';
import type { AuditSource } from './audit.service';

const entry = (id: string, atMs: number): AuditEntryView => ({
  id, at: new Date(atMs).toISOString(), actor: { kind: 'operator', id: 'operator' }, client_address: null,
  action: 'credits.grant', target_id: 'led_x', changes: {},
});

/** A source over a fixed list, read as the SQL reads it: newest first, after the position, `limit` of them. */
function source(entries: AuditEntryView[]): (after: AuditPosition | null, limit: number) => AuditEntryView[] {
  const sorted = [...entries].sort(newestFirst);
  return (after, limit) => sorted.filter((e) => after === null || Date.parse(e.at) < after.atMs || (Date.parse(e.at) === after.atMs && e.id < after.id)).slice(0, limit);
}

function service(own: AuditEntryView[], billing: AuditEntryView[]): AuditService {
  const ownRead = source(own);
  const billingRead = source(billing);
  const repository = { list: async (_a: string, _f: AuditFilters, after: AuditPosition | null, limit: number) => ownRead(after, limit) } as unknown as AuditRepository;
  const billingSource: AuditSource = {
    list: async (_a, _f, after, limit) => {
      const rows = billingRead(after, limit + 1);
      return { entries: rows.slice(0, limit), more: rows.length > limit };
    },
  };
  return new AuditService(repository, billingSource);
}

async function walk(svc: AuditService, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page: { data: AuditEntryView[]; next_cursor: string | null } = await svc.page('acct_x', { limit, cursor, filters: {} }, 'req_x');
    pages.push(page.data.map((e) => e.id));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return pages;
}

describe('the audit log merges account-admin\'s entries with billing\'s', () => {
  it('pages through both in one order, whichever source holds the rest', async () => {
    const own = [entry('aud_a1', 1_000), entry('aud_a2', 3_000), entry('aud_a3', 5_000)];
    const billing = [entry('aud_b1', 2_000), entry('aud_b2', 4_000), entry('aud_b3', 6_000), entry('aud_b4', 7_000), entry('aud_b5', 8_000)];
    expect(await walk(service(own, billing), 3)).toEqual([['aud_b5', 'aud_b4', 'aud_b3'], ['aud_a3', 'aud_b2', 'aud_a2'], ['aud_b1', 'aud_a1']]);
    expect((await walk(service(own, billing), 100)).flat()).toHaveLength(8);
  });

  it('follows when only billing has more, however few account-admin has', async () => {
    const billing = [entry('aud_b1', 1_000), entry('aud_b2', 2_000), entry('aud_b3', 3_000)];
    expect(await walk(service([], billing), 2)).toEqual([['aud_b3', 'aud_b2'], ['aud_b1']]);
  });

  it('breaks ties of the same instant by id, the same way as the SQL (byte order)', async () => {
    const own = [entry('aud_B', 1_000), entry('aud_a', 1_000)];
    const billing = [entry('aud_C', 1_000)];
    expect(await walk(service(own, billing), 1)).toEqual([['aud_a'], ['aud_C'], ['aud_B']]);
  });

  it('refuses a cursor it did not make', () => {
    expect(() => decodeAuditCursor('!!')).toThrow('cursor is not valid');
    expect(() => decodeAuditCursor(Buffer.from('{"t":-1,"i":"aud_x"}').toString('base64url'))).toThrow('cursor is not valid');
  });
});
