import { RESERVATION_TTL_GRACE_MS } from '@svc/contracts';
import type { KeyspaceWalk } from '@svc/redis-client';
import type { ReconciliationRedisAdapter } from './reconciliation-redis.adapter';

/**
 * A pass over the keyspace ends within this long, however many keys Redis holds: a third of
 * the grace a reservation hash outlives its search's bound by, so a stale reservation is found
 * at least once before its hash expires.
 */
export const RESERVATION_PASS_WITHIN_MS = RESERVATION_TTL_GRACE_MS / 3;

/**
 * The reservation hashes the periodic reconciliation looks at, found by a SCAN that goes on
 * at each run (decision 0036): each run walks at least RECONCILE_SCAN_KEYS keys, and more when
 * the keyspace is so large that a pass would otherwise take longer than
 * RESERVATION_PASS_WITHIN_MS. Before, every page of 100 accounts walked the whole keyspace,
 * which holds the result cache's entries too. The keys found in the last complete pass and in
 * the current one are kept; one whose hash is gone is left out when read.
 */
export class ReservationWalk {
  private readonly walk: KeyspaceWalk;
  private previous = new Set<string>();
  private current = new Set<string>();

  constructor(
    private readonly redis: ReconciliationRedisAdapter,
    /** Keys a run walks at least: RECONCILE_SCAN_KEYS. */
    private readonly minKeys: number,
    /** RECONCILE_INTERVAL_MS: how often a run comes. */
    private readonly intervalMs: number,
  ) {
    this.walk = redis.reservationWalk();
  }

  /** One run's step of the walk; the reservation hash keys known after it. */
  async advance(): Promise<Set<string>> {
    const runsPerPass = Math.max(1, Math.floor(RESERVATION_PASS_WITHIN_MS / this.intervalMs));
    const keys = Math.max(this.minKeys, Math.ceil((await this.redis.keyCount()) / runsPerPass));
    const step = await this.walk.step(keys);
    for (const key of step.keys) this.current.add(key);
    const known = new Set([...this.previous, ...this.current]);
    if (step.passDone) {
      this.previous = this.current;
      this.current = new Set();
    }
    return known;
  }
}
