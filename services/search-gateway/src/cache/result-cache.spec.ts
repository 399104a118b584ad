import { entryValue } from './result-cache';

describe('entryValue', () => {
  it('is `<asked>|<stored at>|<count>|<results>`, measured in UTF-8 bytes whatever the results hold', () => {
    for (const snippet of ['plain ascii', 'café é', '字 \u{1F50D} "quoted" \\ back', '']) {
      const json = JSON.stringify([{ title: snippet, url: 'https://example.com/' }]);
      const value = entryValue(10, 1_764_201_600_123, 1, json);
      expect(value.text).toBe(`10|1764201600123|1|${json}`);
      expect(value.byteLength).toBe(Buffer.byteLength(value.text));
    }
  });
});
