import { isEmailAddress, isWellFormedText } from './validators';

describe('isWellFormedText', () => {
  it.each([['\ud800'], ['x\udc00y'], ['a\udfff'], ['\ud83d'], ['\ude00\ud83d']])('finds the lone surrogate in %j', (text) => {
    expect(isWellFormedText(text)).toBe(false);
  });

  it.each([[''], ['plain'], ['caf\u00e9'], ['\ud83d\ude00'], ['x\u{1f600}y']])('takes %j, surrogate pairs included', (text) => {
    expect(isWellFormedText(text)).toBe(true);
  });
});

describe('isEmailAddress', () => {
  it('takes an ordinary address', () => {
    expect(isEmailAddress('someone@example.com')).toBe(true);
  });

  // class-validator's isEmail throws URIError on these (its length check runs encodeURI).
  it.each([['\ud800'], ['x\udc00y'], ['a\ud800@example.com'], ['a@exa\udfffmple.com'], ['a@example.com\ud83d']])('refuses %j without throwing', (value) => {
    expect(isEmailAddress(value)).toBe(false);
  });

  it.each([[null], [42], [{}], ['not an address']])('refuses %j', (value) => {
    expect(isEmailAddress(value)).toBe(false);
  });
});
