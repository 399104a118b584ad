import { LEDGER_JOBS, LEDGER_QUEUE } from '@svc/contracts';
import type { LedgerJobName, LedgerJobPayload } from '@svc/contracts';
import type { Job } from 'bullmq';
import pino from 'pino';
import type { BacklogService } from '../services/backlog/backlog.service';
import type { LedgerDrainService } from '../services/settlement/ledger-drain.service';
import type { SpendableOutboxService } from '../services/spendable/spendable-outbox.service';
import { ledgerProcessor } from './ledger.processor';

function parts(calls: string[]): Parameters<typeof ledgerProcessor>[0] {
  const drain = {
    drain: async () => {
      calls.push('drain');
      return { accounts: 2, written: 5, skipped: 1, deadLettered: 0 };
    },
    sweep: async () => {
      calls.push('sweep');
      return 3;
    },
  } as unknown as LedgerDrainService;
  const outbox = { applyPending: async () => (calls.push('applyPending'), 4) } as unknown as SpendableOutboxService;
  const backlog = { recordDrained: async (n: number) => void calls.push(`recordDrained:${n}`) } as unknown as BacklogService;
  return { drain, outbox, backlog, logger: pino({ level: 'silent' }), drainEveryMs: 1_000, sweepEveryMs: 30_000 };
}

const job = (name: string): Job<LedgerJobPayload, unknown, LedgerJobName> => ({ name }) as unknown as Job<LedgerJobPayload, unknown, LedgerJobName>;

describe('ledgerProcessor', () => {
  it('schedules drain and sweep on LEDGER_QUEUE at their intervals, retried five times', () => {
    const processor = ledgerProcessor(parts([]));
    expect(processor.queue).toBe(LEDGER_QUEUE);
    expect(processor.schedules.map(({ name, everyMs, options }) => ({ name, everyMs, attempts: options.attempts }))).toEqual([
      { name: LEDGER_JOBS.drain, everyMs: 1_000, attempts: 5 },
      { name: LEDGER_JOBS.sweep, everyMs: 30_000, attempts: 5 },
    ]);
  });

  it('a drain job drains and counts what it took for the drain rate', async () => {
    const calls: string[] = [];
    expect(await ledgerProcessor(parts(calls)).process(job(LEDGER_JOBS.drain))).toEqual({ accounts: 2, written: 5, skipped: 1, deadLettered: 0 });
    expect(calls).toEqual(['drain', 'recordDrained:6']);
  });

  it('a sweep job re-marks streams, then applies the outbox', async () => {
    const calls: string[] = [];
    expect(await ledgerProcessor(parts(calls)).process(job(LEDGER_JOBS.sweep))).toEqual({ marked: 3, applied: 4 });
    expect(calls).toEqual(['sweep', 'applyPending']);
  });

  it('fails a job it does not know, running nothing', async () => {
    const calls: string[] = [];
    await expect(ledgerProcessor(parts(calls)).process(job('toString'))).rejects.toThrow('unknown ledger job toString');
    expect(calls).toEqual([]);
  });
});
