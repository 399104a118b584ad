import { findModel } from './catalog';
import { isModelFenceEntry, modelAllowed } from './key-fences';

describe('model fences', () => {
  it.each(['exa/fast', 'brave/web', 'tavily/basic', 'exa/*', 'brave/*', 'tavily/*'])('accepts %s', (entry) => {
    expect(isModelFenceEntry(entry)).toBe(true);
  });

  it.each(['exa/nope', 'acme/*', '*', 'exa/', 'exa', '/*', 'EXA/*', 7, null])('refuses %j', (entry) => {
    expect(isModelFenceEntry(entry)).toBe(false);
  });

  it('allows a model by its id or its provider\'s wildcard, nothing else', () => {
    const exaFast = findModel('exa/fast');
    const braveWeb = findModel('brave/web');
    if (exaFast === undefined || braveWeb === undefined) throw new Error('catalog models expected');
    expect(modelAllowed(['exa/*'], exaFast)).toBe(true);
    expect(modelAllowed(['exa/*'], braveWeb)).toBe(false);
    expect(modelAllowed(['brave/web', 'tavily/*'], braveWeb)).toBe(true);
    expect(modelAllowed(['brave/news'], braveWeb)).toBe(false);
    // A wildcard of a provider whose name starts like another's allows only its own.
    expect(modelAllowed(['exaa/*'], exaFast)).toBe(false);
  });
});
