import { ID_PREFIXES, TIME_ORDERED_KINDS, idPatternSource, isId, newId, newRequestId } from './ids';
import type { IdKind } from './ids';

describe('ids', () => {
  it('makes request ids of req_, the time in 9 base36 characters and 24 random base62 characters', () => {
    const before = Date.now();
    const id = newRequestId();
    const after = Date.now();
    expect(id).toMatch(/^req_[0-9a-z]{9}[0-9A-Za-z]{24}$/);
    const madeAt = parseInt(id.slice(4, 13), 36);
    expect(madeAt).toBeGreaterThanOrEqual(before);
    expect(madeAt).toBeLessThanOrEqual(after);
    expect(isId('request', id)).toBe(true);
  });

  it('gives every kind its own prefix', () => {
    const prefixes = Object.values(ID_PREFIXES);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    expect(newId('account').startsWith('acct_')).toBe(true);
  });

  it('keeps every kind but the time-ordered ones wholly random', () => {
    expect([...TIME_ORDERED_KINDS].sort()).toEqual(['ledgerEntry', 'request', 'researchRun']);
    for (const kind of Object.keys(ID_PREFIXES) as IdKind[]) {
      const body = newId(kind).slice(ID_PREFIXES[kind].length);
      expect(body).toHaveLength(TIME_ORDERED_KINDS.includes(kind) ? 33 : 24);
    }
  });

  it('sorts time-ordered ids by the millisecond they were made, byte-wise and in a natural-language collation', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(newId('ledgerEntry'));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const times = made.map((id) => id.slice(4, 13));
    expect([...times].sort()).toEqual(times);
    expect([...times].sort((a, b) => a.localeCompare(b, 'en'))).toEqual(times);
  });

  it('accepts ids of both forms for a time-ordered kind, one form for the others', () => {
    const random24 = 'nZQd3GZNGpexcvXOIQqthSSB';
    expect(isId('request', `req_${random24}`)).toBe(true);
    expect(isId('request', `req_0mwyujya3${random24}`)).toBe(true);
    // The time part is lower case only, and nothing else has another length.
    expect(isId('request', `req_0MWYUJYA3${random24}`)).toBe(false);
    expect(isId('request', `req_0mwyujya${random24}`)).toBe(false);
    expect(isId('apiKey', `key_0mwyujya3${random24}`)).toBe(false);
    expect(isId('apiKey', `key_${random24}`)).toBe(true);
    expect(new RegExp(idPatternSource('request')).test(newRequestId())).toBe(true);
  });

  it('does not take one kind for another', () => {
    expect(isId('apiKey', newId('managementKey'))).toBe(false);
    expect(isId('apiKey', 'key_short')).toBe(false);
    expect(isId('ledgerEntry', newRequestId())).toBe(false);
  });

  it('does not repeat in 10,000 draws, within one millisecond or across', () => {
    for (const kind of ['apiKey', 'request'] as const) {
      const seen = new Set<string>();
      for (let i = 0; i < 10_000; i++) seen.add(newId(kind));
      expect(seen.size).toBe(10_000);
    }
  });
});
