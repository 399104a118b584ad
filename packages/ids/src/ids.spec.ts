import { ID_PREFIXES, isId, newId, newRequestId } from './ids';

describe('ids', () => {
  it('makes request ids of req_ and 24 base62 characters', () => {
    const id = newRequestId();
    expect(id).toMatch(/^req_[0-9A-Za-z]{24}$/);
    expect(isId('request', id)).toBe(true);
  });

  it('gives every kind its own prefix', () => {
    const prefixes = Object.values(ID_PREFIXES);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    expect(newId('account').startsWith('acct_')).toBe(true);
  });

  it('does not take one kind for another', () => {
    expect(isId('apiKey', newId('managementKey'))).toBe(false);
    expect(isId('apiKey', 'key_short')).toBe(false);
  });

  it('does not repeat in 10,000 draws', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(newId('apiKey'));
    expect(seen.size).toBe(10_000);
  });
});
