import { accepts, bearerOf } from '../src/accepted-keys';

describe('accepted keys', () => {
  it('accepts any key of a comma-separated list and nothing else', () => {
    expect(accepts('sim-exa-key,own-key', 'own-key')).toBe(true);
    expect(accepts('sim-exa-key,own-key', 'sim-exa-key')).toBe(true);
    expect(accepts('sim-exa-key,own-key', 'own')).toBe(false);
    expect(accepts('sim-exa-key', '')).toBe(false);
    expect(accepts('sim-exa-key', undefined)).toBe(false);
    expect(accepts('sim-exa-key', ['sim-exa-key'])).toBe(false);
    expect(bearerOf('Bearer abc')).toBe('abc');
    expect(bearerOf('Basic abc')).toBeUndefined();
  });
});
