import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@svc/contracts';
import { MAX_QUERY_CHARS } from '@svc/search-gateway';
import { repoRoot } from '@svc/test-kit';
import { markedTables, tableProblems } from '../src/reference';

/**
 * docs/api.md follows the OpenAPI document: its marked field tables (src/reference.ts says
 * how a table is marked and what is compared) name the fields, types, required-ness and
 * "always …" statements the document has, and the few numbers its prose states are the
 * declared ones (CLAIMS). The prose stays hand-written; a table that drifts fails here.
 */
type Json = Record<string, unknown>;

const root = repoRoot();
const markdown = readFileSync(join(root, 'docs/api.md'), 'utf8');
const document = JSON.parse(readFileSync(join(root, 'services/search-gateway/openapi.json'), 'utf8')) as Json;
const tables = markedTables(markdown);

/** The schemas whose tables the reference must keep marked (a marker removed fails here). */
const MARKED = ['ErrorResponse', 'Model', 'ServiceStatus', 'Pricing', 'Credits', 'CheckoutBody', 'UsageQuery', 'ApiKey', 'KeyBody', 'SearchBody', 'SearchResponse', 'Attempt', 'ExtractBody', 'ExtractResponse', 'ExtractResult', 'ExtractAttempt', 'FanoutSearchResponse', 'FanoutResult', 'FanoutAttempt', 'ResearchBody', 'ResearchRun'];

type Schemas = Record<string, { properties: Record<string, Json> }>;
const schemas = (document.components as { schemas: Schemas }).schemas;

/**
 * Statements of the prose checked against the declared value: each `find` must match
 * docs/api.md (a reworded statement is put back here), and every match must agree.
 */
const CLAIMS: { what: string; find: RegExp; expected: (match: RegExpMatchArray) => [unknown, unknown] }[] = [
  { what: 'the API key name length in the record', find: /\| `name` \| string \| 0\.\.(\d+) characters/g, expected: (m) => [Number(m[1]), schemas.ApiKey?.properties.name?.maxLength] },
  { what: 'the key name length accepted', find: /\| `name` \| string of (\d+)\.\.(\d+) characters/g, expected: (m) => [[Number(m[1]), Number(m[2])], [LIMITS.keyName.min, LIMITS.keyName.max]] },
  { what: 'the purchase range in the pricing answer', find: /`\{"min_usd": (\d+), "max_usd": (\d+)\}`/g, expected: (m) => [[Number(m[1]), Number(m[2])], [LIMITS.purchaseUsd.min, LIMITS.purchaseUsd.max]] },
  { what: 'the checkout amount range', find: /required number from (\d+) to ([\d,]+), whole cents/g, expected: (m) => [[Number(m[1]), Number((m[2] ?? '').replace(/,/g, ''))], [LIMITS.purchaseUsd.min, LIMITS.purchaseUsd.max]] },
  { what: 'the query length', find: /required; 1\.\.([\d,]+) characters \*\*after trimming\*\*/g, expected: (m) => [Number((m[1] ?? '').replace(/,/g, '')), MAX_QUERY_CHARS] },
  { what: 'the fallback list length', find: /\| `models` \| array of strings \| 1\.\.(\d+) model ids/g, expected: (m) => [Number(m[1]), schemas.SearchBody?.properties.models?.maxItems] },
];

describe('docs/api.md against the OpenAPI document', () => {
  it('marks the field table of every schema it must', () => {
    expect([...new Set(tables.map((t) => t.schema))].sort()).toEqual([...MARKED].sort());
  });

  it.each(tables.map((t) => [`${t.schema}${t.partial ? ' (partial)' : ''} at line ${t.line}`, t] as const))('the table of %s matches the document', (_name, table) => {
    expect(tableProblems(table, document)).toEqual([]);
  });

  it.each(CLAIMS.map((c) => [c.what, c] as const))('states %s as declared', (_what, claim) => {
    const matches = [...markdown.matchAll(claim.find)];
    expect(matches.length).toBeGreaterThan(0);
    for (const match of matches) {
      const [stated, declared] = claim.expected(match);
      expect(stated).toEqual(declared);
    }
  });

  describe('the check itself fails on a drifted table', () => {
    const keyTable = tables.find((t) => t.schema === 'ApiKey');
    if (keyTable === undefined) throw new Error('no ApiKey table');
    const edited = (change: (rows: string[][]) => string[][]): ReturnType<typeof tableProblems> => tableProblems({ ...keyTable, rows: change(keyTable.rows.map((r) => [...r])) }, document);
    const row = (rows: string[][], field: string): string[] => {
      const found = rows.find((r) => r[0] === `\`${field}\``);
      if (found === undefined) throw new Error(`no row ${field}`);
      return found;
    };
    /** The table with one cell of `field`'s row changed: column 1 is the type, column 2 the description. */
    const editedCell = (field: string, column: 1 | 2, text: string): ReturnType<typeof tableProblems> => edited((rows) => {
      row(rows, field)[column] = text;
      return rows;
    });

    it('a stale statement: last_used_at "always null" (this build records key use)', () => {
      expect(editedCell('last_used_at', 2, 'always `null` in this build (nothing records key use yet)')).toEqual([expect.stringContaining('`last_used_at` is documented as always null, the document allows null or string')]);
    });

    it('a type that differs (integer is not number)', () => {
      expect(editedCell('usage_usd', 1, 'integer')).toEqual([expect.stringContaining('`usage_usd` is documented as integer, the document says number')]);
    });

    it('a value list that differs', () => {
      expect(editedCell('limit_reset', 1, '`"daily"`, `"monthly"` or null')).toEqual([expect.stringContaining('`limit_reset` is documented as ["daily","monthly",null]')]);
    });

    it('a field the document does not have, and one the table leaves out', () => {
      expect(edited((rows) => [...rows.filter((r) => r[0] !== '`disabled`'), ['`paused`', 'boolean', 'not a field']])).toEqual([
        expect.stringContaining('`paused` is not a field of ApiKey'),
        expect.stringContaining('`disabled` is in the document, not in the table'),
      ]);
    });

    it('a required field documented as absent sometimes', () => {
      expect(editedCell('label', 2, 'absent on old keys')).toEqual([expect.stringContaining('`label` is documented as optional, the document says required')]);
    });
  });
});
