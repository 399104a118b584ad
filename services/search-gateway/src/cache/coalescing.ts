import type { CachedAnswer } from './entry-codec';

/**
 * Identical searches in flight in this process (docs/decisions/0023, "Coalescing", and 0042):
 * how many attempts are on each entry now, and one shared poll per entry, result count and age
 * for the searches waiting for the answer of the one that leads there. The poll's read of the
 * entry is the result cache's (its Redis command and its failures).
 */

/** What a search waiting for an identical one finds. */
export type JoinOutcome = { readonly kind: 'joined'; readonly answer: CachedAnswer } | { readonly kind: 'alone' };

export const ALONE: JoinOutcome = { kind: 'alone' };

/** One read of the entry for a waiting search: its outcome, or null while a search still leads there. */
export type Peek = (entry: string, asked: number, maxAgeMs: number | null) => Promise<JoinOutcome | null>;

export class Coalescing {
  /** Searches of this process waiting for the same lead (entry, result count and age) share one poll. */
  private readonly waits = new Map<string, Promise<JoinOutcome>>();
  /** Attempts of this process on each entry between their lookup and their close. */
  private readonly onEntry = new Map<string, number>();

  constructor(private readonly peek: Peek, private readonly pollMs: number, private readonly clock: () => number) {}

  /**
   * An attempt of this process looks up `entry`: true when another one is already on it (this
   * one will most likely follow it or be served its answer, so it takes no provider lease
   * beside its lookup). Each enter is matched by one leave.
   */
  enter(entry: string): boolean {
    const others = this.onEntry.get(entry) ?? 0;
    this.onEntry.set(entry, others + 1);
    return others > 0;
  }

  leave(entry: string): void {
    const left = (this.onEntry.get(entry) ?? 1) - 1;
    if (left > 0) this.onEntry.set(entry, left);
    else this.onEntry.delete(entry);
  }

  /**
   * Waits for the answer of the search leading on `entry`: `joined` with it once stored,
   * `alone` when the lead is gone without one that serves this search (the leading call
   * failed, or its gateway died and the lead expired) or `timeoutMs` passed.
   */
  join(entry: string, asked: number, maxAgeMs: number | null, timeoutMs: number): Promise<JoinOutcome> {
    const id = `${entry}\n${asked}\n${maxAgeMs ?? -1}`;
    const running = this.waits.get(id);
    if (running !== undefined) return running;
    const wait = this.poll(entry, asked, maxAgeMs, this.clock() + timeoutMs).finally(() => this.waits.delete(id));
    this.waits.set(id, wait);
    return wait;
  }

  private async poll(entry: string, asked: number, maxAgeMs: number | null, deadlineMs: number): Promise<JoinOutcome> {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      const outcome = await this.peek(entry, asked, maxAgeMs);
      if (outcome !== null) return outcome;
      if (this.clock() >= deadlineMs) return ALONE;
    }
  }
}
