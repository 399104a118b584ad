import { AccountSlots } from './account-slots';

describe('AccountSlots', () => {
  it('gives an account at most its share, others theirs, and a slot back once', () => {
    const slots = new AccountSlots(2);
    const a1 = slots.take('acct_a');
    const a2 = slots.take('acct_a');
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(slots.take('acct_a')).toBeNull();
    expect(slots.take('acct_b')).not.toBeNull();
    a1?.();
    a1?.();
    expect(slots.heldBy('acct_a')).toBe(1);
    expect(slots.take('acct_a')).not.toBeNull();
    expect(slots.take('acct_a')).toBeNull();
  });
});
