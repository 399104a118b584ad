import { describeError } from './describe-error';

describe('describeError', () => {
  it('writes an error as its name and message, without a stack', () => {
    const error = new TypeError('bad value');
    expect(describeError(error)).toBe('TypeError: bad value');
    expect(describeError(Object.assign(new Error('refused'), { name: 'ReplyError' }))).toBe('ReplyError: refused');
  });

  it('writes anything else thrown as a string', () => {
    expect(describeError('down')).toBe('down');
    expect(describeError(42)).toBe('42');
    expect(describeError(undefined)).toBe('undefined');
  });
});
