import type { Logger } from 'pino';
import { replyValues } from '../redis/redis-batch';
import type { Reply } from '../redis/redis-batch';
import type { OutgoingSettlement } from './money.ops';
import { SETTLE_RESEND_WINDOW_MS } from './money.scripts';

/** A background settlement Redis refused is sent again after this, doubling up to the max. */
const SETTLE_RETRY_BASE_MS = 100;
const SETTLE_RETRY_MAX_MS = 5_000;

/** How the re-sender reaches Redis (MoneyRepository attaches itself). */
export interface SettlementChannel {
  /** Sends the settlement's commands again, without waiting; resolves with Redis's answer. */
  resend(outgoing: OutgoingSettlement): Promise<Reply[]>;
  /** Redis took the settlement (every command answered without an error). */
  landed(outgoing: OutgoingSettlement): void;
}

/**
 * The background half of a settlement (docs/decisions/0004): a settlement is written to the
 * socket before the search replies, and its answer is checked here. One Redis refused or
 * never answered is sent again (the same commands: the settle script is keyed by the request
 * id and every op is idempotent), with backoff from 100 ms to 5 s, for
 * SETTLE_RESEND_WINDOW_MS after its first send, while its settled marker still dedupes it;
 * then it is logged at error with its whole record (ids and amounts only) for a manual
 * replay. Shutdown drains what is unanswered, then `close` logs what is left.
 *
 * MoneyRepository is given one (or makes its own) and attaches itself as the channel.
 * Timers are unref'd: they never keep the process alive.
 */
export class SettlementResender {
  /** Settlements sent whose answer has not come yet, or that are waiting to be sent again. */
  private waiting = 0;
  /** Settlements waiting to be sent again, by their timer. */
  private readonly resends = new Map<NodeJS.Timeout, OutgoingSettlement>();
  private closed = false;
  private channel: SettlementChannel | null = null;
  private log: Logger | null = null;

  /** `clock`: Unix ms, measured against each settlement's first send (tests fix it). */
  constructor(private readonly clock: () => number = Date.now) {}

  attach(channel: SettlementChannel): void {
    this.channel = channel;
  }

  useLogger(log: Logger): void {
    this.log = log;
  }

  /** Settlements sent whose answer has not come yet, or that are waiting to be sent again. */
  get unanswered(): number {
    return this.waiting;
  }

  /** Checks a settlement's first answer in the background. */
  watch(outgoing: OutgoingSettlement, replies: Promise<Reply[]>): void {
    this.watchAttempt(outgoing, replies, 1);
  }

  /** Waits (at most `timeoutMs`) for every background settlement to be answered; false if some were not. */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.waiting > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return this.waiting === 0;
  }

  /**
   * Stops re-sending (shutdown, after the drain). A settlement still waiting to be re-sent
   * is logged with its record: it is the one thing an operator must replay by hand.
   */
  close(): void {
    this.closed = true;
    for (const [timer, outgoing] of this.resends) {
      clearTimeout(timer);
      this.lost(outgoing, 'the gateway stopped before redis took it');
    }
    this.resends.clear();
  }

  private watchAttempt(outgoing: OutgoingSettlement, replies: Promise<Reply[]>, attempt: number): void {
    this.waiting += 1;
    replies.then(replyValues).then(
      () => {
        this.waiting -= 1;
        // Kept until the worker confirms it durable: re-sent if Redis loses it before the drain.
        this.channel?.landed(outgoing);
      },
      (error: unknown) => {
        this.waiting -= 1;
        this.failed(outgoing, error, attempt);
      },
    );
  }

  /** A send Redis refused or did not answer: again after the backoff, within the re-send window. */
  private failed(outgoing: OutgoingSettlement, error: unknown, attempt: number): void {
    const { scope } = outgoing;
    const delayMs = Math.min(SETTLE_RETRY_MAX_MS, SETTLE_RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 10));
    if (this.closed || this.channel === null || this.clock() + delayMs - outgoing.firstSentAtMs > SETTLE_RESEND_WINDOW_MS) {
      this.lost(outgoing, error instanceof Error ? error.message : String(error));
      return;
    }
    this.log?.error({ request_id: scope.requestId, account_id: scope.accountId, attempt, err: error instanceof Error ? error.message : String(error) }, 'settlement not confirmed by redis; sending it again');
    // Counted as unanswered while it waits, so the drain at shutdown waits for it too.
    this.waiting += 1;
    const channel = this.channel;
    const timer = setTimeout(() => {
      this.resends.delete(timer);
      this.waiting -= 1;
      this.watchAttempt(outgoing, channel.resend(outgoing), attempt + 1);
    }, delayMs);
    // Never what keeps the process alive: shutdown drains, then close() reports what is left.
    timer.unref();
    this.resends.set(timer, outgoing);
  }

  /** A settlement Redis never took: the record is logged whole (ids and amounts, nothing secret) for a manual replay. */
  private lost(outgoing: OutgoingSettlement, reason: string): void {
    const { scope, settlement } = outgoing;
    this.log?.error(
      { request_id: scope.requestId, account_id: scope.accountId, charged_micros: settlement.record.chargedMicros, record: outgoing.recordJson, err: reason },
      'settlement lost: redis never took it; replay the record into the account\'s settlement stream',
    );
  }
}
