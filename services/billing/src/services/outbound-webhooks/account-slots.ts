/**
 * The delivery slots one account may hold at once in this process (WEBHOOK_ACCOUNT_CONCURRENCY):
 * `take` answers a release function, or null when the account already holds its share (the
 * delivery then waits without a slot, so another account's deliveries find one free).
 */
export class AccountSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly perAccount: number) {}

  take(accountId: string): (() => void) | null {
    const now = this.held.get(accountId) ?? 0;
    if (now >= this.perAccount) return null;
    this.held.set(accountId, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(accountId) ?? 1) - 1;
      if (left <= 0) this.held.delete(accountId);
      else this.held.set(accountId, left);
    };
  }

  /** Slots the account holds now. */
  heldBy(accountId: string): number {
    return this.held.get(accountId) ?? 0;
  }
}
