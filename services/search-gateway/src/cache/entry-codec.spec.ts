import { decodeEntry, entryValue, isLead, leadValue, servingEntry } from './entry-codec';

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

describe('decodeEntry and servingEntry', () => {
  const json = JSON.stringify([{ title: 't', url: 'https://example.com/' }, { title: 'u', url: 'https://example.org/' }]);

  it('reads the count, the results asked for and the age without parsing the results', () => {
    expect(decodeEntry(`10|1000|2|${json}`, 3_999)).toEqual({ answer: { count: 2, json, ageS: 2 }, asked: 10, storedAt: 1_000 });
    // A clock behind the store's: the age is never negative.
    expect(decodeEntry(`10|5000|2|${json}`, 1_000)?.answer.ageS).toBe(0);
  });

  it('reads the first format (no count) by counting its results', () => {
    expect(decodeEntry(`3|1000|${json}`, 1_000)).toEqual({ answer: { count: 2, json, ageS: 0 }, asked: 3, storedAt: 1_000 });
  });

  it('is null for anything that is not an answer: a lead, a broken prefix, a count that is no count, results that are not an array', () => {
    for (const value of [leadValue('tok'), '10|1000', `x|y|${json}`.slice(0, 3), `10|1000|-1|${json}`, `10|1000|x|${json}`, '10|1000|{}', '10|1000|[not json', '10|1000|2|{}']) {
      expect([value, decodeEntry(value, 1_000)]).toEqual([value, null]);
    }
    expect(isLead(leadValue('tok'))).toBe(true);
    expect(isLead(`10|1000|2|${json}`)).toBe(false);
  });

  it('serves a request for as many results or fewer, within cache_max_age_s', () => {
    const value = `10|1000|2|${json}`;
    expect(servingEntry(value, 10, null, 1_000)).not.toBeNull();
    expect(servingEntry(value, 11, null, 1_000)).toBeNull();
    expect(servingEntry(value, 3, 500, 1_500)).not.toBeNull();
    expect(servingEntry(value, 3, 500, 1_501)).toBeNull();
  });
});
