import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALERT_EVENT_TYPES } from '@svc/contracts';
import type { AlertEvent } from '@svc/contracts';
import type { EventRow } from '../../stores/events.repository';
import { AlertMails } from './alert-mails';

const row = (id: string, type: string): EventRow => ({
  id, accountId: 'acct_1', type, data: { balance_usd: 1 }, createdAt: new Date('2026-12-08T10:00:00.000Z'), mark: { atMicros: 0n, id },
});

describe('alerts handed to the mail queue', () => {
  it('adds one alert job per event, then marks them; marks nothing when the queue refuses', async () => {
    const marked: string[][] = [];
    const added: AlertEvent[][] = [];
    const events = { alertsToMail: async () => [row('evt_1', 'balance.low'), row('evt_2', 'auto_topup.failed')], markMailQueued: async (ids: readonly string[]) => { marked.push([...ids]); } };
    expect(await new AlertMails(events, { add: async (a) => { added.push([...a]); } }).handOver()).toBe(2);
    expect(added).toEqual([[
      { id: 'evt_1', type: 'balance.low', account_id: 'acct_1', created_at: '2026-12-08T10:00:00.000Z', data: { balance_usd: 1 } },
      { id: 'evt_2', type: 'auto_topup.failed', account_id: 'acct_1', created_at: '2026-12-08T10:00:00.000Z', data: { balance_usd: 1 } },
    ]]);
    expect(marked).toEqual([['evt_1', 'evt_2']]);

    marked.length = 0;
    const refusing = new AlertMails(events, { add: async () => { throw new Error('redis down'); } });
    await expect(refusing.handOver()).rejects.toThrow('redis down');
    expect(marked).toEqual([]);
  });

  it('the partial index of the handover reads exactly ALERT_EVENT_TYPES', () => {
    const migrations = join(__dirname, '../../../prisma/migrations');
    const dir = readdirSync(migrations).find((d) => d.endsWith('_alert_mail'));
    const sql = readFileSync(join(migrations, dir ?? 'missing', 'migration.sql'), 'utf8');
    const list = /"type" IN \(([^)]*)\)/.exec(sql)?.[1] ?? '';
    expect(list.split(',').map((t) => t.trim().replace(/^'|'$/g, ''))).toEqual([...ALERT_EVENT_TYPES]);
  });
});
