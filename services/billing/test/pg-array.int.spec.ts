import { Client } from 'pg';
import { databaseUrl } from '@svc/test-kit';
import { pgArray } from '../src/db/pg-array';

/** The array literals the ledger drain sends, read back by the real PostgreSQL. */
describe('pgArray on PostgreSQL', () => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ connectionString: databaseUrl('postgres') });
    await client.connect();
  });

  afterAll(() => client.end());

  it('reads back every text exactly, quoted or not', async () => {
    const texts = ['req_AbC123', 'exa/fast', '', 'null', 'NULL', 'provider returned 500', 'a,b', '{x}', 'say "hi"', 'back\\slash', ' lead', 'tab\there', 'é ü 漢', '2026-11-23T12:00:00.000Z'];
    const { rows } = await client.query<{ a: string[] }>('SELECT $1::text[] AS a', [pgArray(texts)]);
    expect(rows[0]?.a).toEqual(texts);
  });

  it('reads back NULL, numbers, booleans and timestamps', async () => {
    const { rows } = await client.query<{ t: (string | null)[]; n: string[]; b: boolean[]; at: Date[] }>(
      'SELECT $1::text[] AS t, $2::bigint[]::text[] AS n, $3::boolean[] AS b, $4::timestamptz[] AS at',
      [pgArray(['x', null]), pgArray([0, -5000, 9_007_199_254_740_991]), pgArray([true, false]), pgArray(['2026-11-23T12:00:00.123Z'])],
    );
    expect(rows[0]?.t).toEqual(['x', null]);
    expect(rows[0]?.n).toEqual(['0', '-5000', '9007199254740991']);
    expect(rows[0]?.b).toEqual([true, false]);
    expect(rows[0]?.at.map((d) => d.toISOString())).toEqual(['2026-11-23T12:00:00.123Z']);
  });
});
