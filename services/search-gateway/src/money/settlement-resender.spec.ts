import pino from 'pino';
import type { KeyRecord, SettlementRecord } from '@svc/contracts';
import type { Reply } from '../redis/redis-batch';
import type { OutgoingSettlement } from './money.ops';
import { moneyScope } from './money.scope';
import { SETTLE_RESEND_WINDOW_MS } from './money.scripts';
import { SettlementResender } from './settlement-resender';
import type { SettlementChannel } from './settlement-resender';

const record: KeyRecord = { id: 'key_1', accountId: 'acc_1', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false };
const T0 = Date.UTC(2031, 4, 20, 10);

function outgoing(requestId: string, firstSentAtMs = T0): OutgoingSettlement {
  const scope = moneyScope(record, requestId, null, T0, 60_000);
  const settlementRecord = { v: 1, requestId, accountId: 'acc_1', keyId: 'key_1', settledAtMs: T0, attempts: [], chargedMicros: 4_000, traceparent: null } as unknown as SettlementRecord;
  return { scope, ops: [], settlement: { record: settlementRecord, outcome: null }, recordJson: JSON.stringify(settlementRecord), firstSentAtMs };
}

const ok: Reply[] = [[null, 1], [null, null]];
const refused: Reply[] = [[null, 1], [new Error('ERR settle refused'), null]];

/** A channel whose re-sends answer from a queue, recording what it re-sent and what landed. */
function channel(answers: (Reply[] | Error)[]): SettlementChannel & { resent: string[]; took: string[] } {
  const resent: string[] = [];
  const took: string[] = [];
  return {
    resent,
    took,
    resend: (o) => {
      resent.push(o.scope.requestId);
      const answer = answers.shift() ?? ok;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    landed: (o) => took.push(o.scope.requestId),
  };
}

function logger(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }), lines };
}

describe('SettlementResender', () => {
  let now = T0;
  beforeEach(() => {
    jest.useFakeTimers();
    now = T0;
  });
  afterEach(() => jest.useRealTimers());

  describe('landed: Redis answered every command', () => {
    it('tells the channel (the record is retained) and counts nothing unanswered', async () => {
      const resender = new SettlementResender(() => now);
      const ch = channel([]);
      resender.attach(ch);
      resender.watch(outgoing('req_a'), Promise.resolve(ok));
      expect(resender.unanswered).toBe(1);
      await jest.advanceTimersByTimeAsync(0);
      expect(resender.unanswered).toBe(0);
      expect(ch.took).toEqual(['req_a']);
      expect(ch.resent).toEqual([]);
    });
  });

  describe('refused or unanswered: sent again', () => {
    it('re-sends the same settlement after 100, 200, 400 ms until it lands, logging each failure', async () => {
      const { log, lines } = logger();
      const resender = new SettlementResender(() => now);
      const ch = channel([refused, new Error('connection lost'), ok]);
      resender.attach(ch);
      resender.useLogger(log);
      const sent = outgoing('req_b');
      resender.watch(sent, Promise.resolve(refused));
      await jest.advanceTimersByTimeAsync(99);
      expect(ch.resent).toEqual([]);
      // Waiting to be re-sent still counts: the shutdown drain waits for it.
      expect(resender.unanswered).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(ch.resent).toEqual(['req_b']);
      await jest.advanceTimersByTimeAsync(200);
      expect(ch.resent).toEqual(['req_b', 'req_b']);
      await jest.advanceTimersByTimeAsync(399);
      expect(ch.resent).toHaveLength(2);
      await jest.advanceTimersByTimeAsync(1);
      expect(ch.resent).toHaveLength(3);
      expect(ch.took).toEqual(['req_b']);
      expect(resender.unanswered).toBe(0);
      expect(lines.map((l) => [l.msg, l.attempt, l.err])).toEqual([
        ['settlement not confirmed by redis; sending it again', 1, 'ERR settle refused'],
        ['settlement not confirmed by redis; sending it again', 2, 'ERR settle refused'],
        ['settlement not confirmed by redis; sending it again', 3, 'connection lost'],
      ]);
    });

    it('the backoff doubles up to 5 s', async () => {
      const resender = new SettlementResender(() => now);
      const ch = channel(Array.from({ length: 8 }, () => refused));
      resender.attach(ch);
      resender.watch(outgoing('req_c'), Promise.resolve(refused));
      // 100 + 200 + ... + 3200 = 6300 ms for six re-sends, then 5 s each.
      await jest.advanceTimersByTimeAsync(6_300);
      expect(ch.resent).toHaveLength(6);
      await jest.advanceTimersByTimeAsync(4_999);
      expect(ch.resent).toHaveLength(6);
      await jest.advanceTimersByTimeAsync(1);
      expect(ch.resent).toHaveLength(7);
    });
  });

  describe('lost: Redis never took it', () => {
    it('past the re-send window it is logged at error with its whole record, and not sent again', async () => {
      const { log, lines } = logger();
      const resender = new SettlementResender(() => now);
      const ch = channel([]);
      resender.attach(ch);
      resender.useLogger(log);
      now = T0 + SETTLE_RESEND_WINDOW_MS - 50;
      const sent = outgoing('req_d');
      resender.watch(sent, Promise.resolve(refused));
      await jest.advanceTimersByTimeAsync(1_000);
      expect(ch.resent).toEqual([]);
      expect(resender.unanswered).toBe(0);
      expect(lines).toEqual([expect.objectContaining({
        level: 50, msg: 'settlement lost: redis never took it; replay the record into the account\'s settlement stream',
        request_id: 'req_d', account_id: 'acc_1', charged_micros: 4_000, record: sent.recordJson, err: 'ERR settle refused',
      })]);
    });

    it('close logs every settlement still waiting to be re-sent, and cancels its re-send', async () => {
      const { log, lines } = logger();
      const resender = new SettlementResender(() => now);
      const ch = channel([]);
      resender.attach(ch);
      resender.useLogger(log);
      resender.watch(outgoing('req_e'), Promise.resolve(refused));
      await jest.advanceTimersByTimeAsync(10);
      resender.close();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(ch.resent).toEqual([]);
      expect(lines.map((l) => [l.msg, l.request_id, l.err])).toEqual([
        ['settlement not confirmed by redis; sending it again', 'req_e', 'ERR settle refused'],
        ['settlement lost: redis never took it; replay the record into the account\'s settlement stream', 'req_e', 'the gateway stopped before redis took it'],
      ]);
    });

    it('after close a failure is lost at once', async () => {
      const { log, lines } = logger();
      const resender = new SettlementResender(() => now);
      resender.attach(channel([]));
      resender.useLogger(log);
      resender.close();
      resender.watch(outgoing('req_f'), Promise.reject(new Error('socket closed')));
      await jest.advanceTimersByTimeAsync(0);
      expect(lines.map((l) => l.msg)).toEqual(['settlement lost: redis never took it; replay the record into the account\'s settlement stream']);
    });
  });

  describe('drain', () => {
    it('resolves true once every settlement was answered, false when one is still unanswered at the timeout', async () => {
      const resender = new SettlementResender(() => now);
      resender.attach(channel([]));
      let answer: (replies: Reply[]) => void = () => undefined;
      resender.watch(outgoing('req_g'), new Promise<Reply[]>((resolve) => {
        answer = resolve;
      }));
      const late = resender.drain(50);
      await jest.advanceTimersByTimeAsync(60);
      await expect(late).resolves.toBe(false);
      const drained = resender.drain(1_000);
      answer(ok);
      await jest.advanceTimersByTimeAsync(20);
      await expect(drained).resolves.toBe(true);
    });
  });
});
