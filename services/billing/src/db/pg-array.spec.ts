import { pgArray } from './pg-array';

describe('pgArray', () => {
  it('writes ids, numbers, booleans and NULL without quotes', () => {
    expect(pgArray(['req_AbC123', 'exa/fast', 5000, -5000, true, false, null])).toBe('{req_AbC123,exa/fast,5000,-5000,t,f,NULL}');
  });

  it('quotes what must be quoted, escaping quotes and backslashes', () => {
    expect(pgArray(['', 'null', 'provider returned 500', 'a,b', '{x}', 'say "hi"', 'back\\slash', '2026-11-23T12:00:00.000Z']))
      .toBe('{"","null","provider returned 500","a,b","{x}","say \\"hi\\"","back\\\\slash",2026-11-23T12:00:00.000Z}');
  });

  it('is an empty array for no values', () => {
    expect(pgArray([])).toBe('{}');
  });

  it('refuses a number PostgreSQL could not read', () => {
    expect(() => pgArray([Number.NaN])).toThrow(RangeError);
  });
});
