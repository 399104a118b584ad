import { nextStreamId } from './settlement-stream.adapter';

describe('nextStreamId', () => {
  it('is the smallest id above the given one, in the same millisecond', () => {
    expect(nextStreamId('1732406400000-0')).toBe('1732406400000-1');
    expect(nextStreamId('1732406400000-41')).toBe('1732406400000-42');
  });

  it('counts past 2^53 without losing the last digit', () => {
    expect(nextStreamId('5-9007199254740993')).toBe('5-9007199254740994');
  });

  it('refuses what is not a stream id', () => {
    expect(() => nextStreamId('1732406400000')).toThrow('not a stream id');
  });
});
