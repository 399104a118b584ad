/**
 * Two small costs every cached search pays in the gateway, measured alone in one process
 * (docs/benchmarks.md, "cache-key"): the query's normalisation for the cache key, and the
 * measuring of a miss's stored answer. Each is timed as the gateway runs it now (imported from
 * its build) against the form it had before, written here as the reference (each pair is
 * checked to give the same answer first):
 *
 * 1. normaliseQuery: a query of printable ASCII words one space apart is returned as it is; any
 *    other goes through NFC, the trim and the whitespace collapse. Reference: all three on every
 *    query. Two sets of 1,000 queries: plain ones (what the shortcut takes) and ones with
 *    accents, tabs and double spaces (what it leaves); and the whole cacheDigest (the SHA-256
 *    of the model, the normalised query and the filters) on the plain ones.
 * 2. entryValue: the stored answer's UTF-8 length read from the results' JSON plus its ASCII
 *    prefix. Reference: the length of the joined text `<prefix><results>` (what the store
 *    measured before). 1,000 different answers of 10 results, about 5 KB each, ASCII and with
 *    accents, taken in turn.
 *
 * Rounds alternate the two forms; the median ns per call of each. Prints Markdown and writes
 * bench/results/cache-key.json.
 *
 * Env: ROUNDS (9), PER_ROUND (200000 for the queries, a fiftieth of it for the answers).
 */
import { hash } from 'node:crypto';
import { cacheDigest, entryValue, normaliseQuery } from '@svc/search-gateway';
import { median, writeResult } from './lib-results';
import { knobsFromEnv } from './lib-stack';

const { ROUNDS, PER_ROUND } = knobsFromEnv({ ROUNDS: 9, PER_ROUND: 200_000 });

/** The normalisation as the gateway ran it on every query before the ASCII shortcut. */
function fullNormalisation(query: string): string {
  return query.normalize('NFC').trim().replace(/\s+/gu, ' ');
}

/** The key's digest as the gateway made it before: SHA-256 over the fully normalised query. */
function digestBefore(modelId: string, query: string, filters: string): string {
  return hash('sha256', `${modelId}\n${fullNormalisation(query)}\n${filters}`, 'base64url');
}

/** The stored answer's measure as the gateway took it before: the joined text. */
function joinedLength(asked: number, storedAt: number, count: number, json: string): number {
  return Buffer.byteLength(`${asked}|${storedAt}|${count}|${json}`);
}

const PLAIN = Array.from({ length: 1000 }, (_, i) => `open source search engines ${i} for rust async runtimes`);
const OTHER = Array.from({ length: 1000 }, (_, i) => ` caf\u00e9  search\tengines ${i} for r\u00e9sum\u00e9s `);

/**
 * 1,000 different answers of 10 results (about 5 MB in all, more than the CPU's caches hold,
 * as a gateway's answers are: each new), the same snippet in each.
 */
function answers(snippet: string): string[] {
  return Array.from({ length: 1000 }, (_, k) => JSON.stringify(Array.from({ length: 10 }, (_, i) => ({
    title: `Result ${i} of answer ${k}: open source search engines`, url: `https://example.com/articles/${k}/${i}/open-source-search`,
    snippet: snippet.repeat(3), published_at: '2026-11-01T00:00:00.000Z', score: 0.87,
  }))));
}
const ANSWERS = {
  ascii: answers('Open source search engines let you index and query your own documents; this one is written in Rust. '),
  accented: answers('Les moteurs de recherche libres indexent vos documents; celui-ci est \u00e9crit en Rust, tr\u00e8s rapide. '),
};

/** ns per call of `f` over `n` calls (`f` returns a number so the work is not dropped). */
function timed(n: number, f: (i: number) => number): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += f(i);
  const ns = Number(process.hrtime.bigint() - start) / n;
  if (sink === -1) console.log(sink);
  return ns;
}

interface Pair {
  name: string;
  now: (i: number) => number;
  before: (i: number) => number;
  calls: number;
}

function checkSame(): void {
  for (const query of [...PLAIN, ...OTHER]) {
    if (normaliseQuery(query) !== fullNormalisation(query)) throw new Error(`normaliseQuery differs from the full normalisation for ${JSON.stringify(query)}`);
    if (cacheDigest('exa/fast', query, '{}') !== digestBefore('exa/fast', query, '{}')) throw new Error(`cacheDigest differs from the earlier digest for ${JSON.stringify(query)}`);
  }
  for (const json of Object.values(ANSWERS).flat()) {
    if (entryValue(10, 1_764_201_600_123, 10, json).byteLength !== joinedLength(10, 1_764_201_600_123, 10, json)) throw new Error('entryValue measures another length than the joined text');
  }
}

function main(): void {
  checkSame();
  const now = Date.now();
  const pairs: Pair[] = [
    { name: 'normaliseQuery, plain queries', now: (i) => normaliseQuery(PLAIN[i % 1000] as string).length, before: (i) => fullNormalisation(PLAIN[i % 1000] as string).length, calls: PER_ROUND },
    { name: 'normaliseQuery, other queries', now: (i) => normaliseQuery(OTHER[i % 1000] as string).length, before: (i) => fullNormalisation(OTHER[i % 1000] as string).length, calls: PER_ROUND },
    {
      name: 'cacheDigest, plain queries', calls: PER_ROUND,
      now: (i) => cacheDigest('exa/fast', PLAIN[i % 1000] as string, '{}').length,
      before: (i) => digestBefore('exa/fast', PLAIN[i % 1000] as string, '{}').length,
    },
    ...Object.entries(ANSWERS).map(([kind, jsons]): Pair => ({
      name: `stored answer's length, ${kind} (about ${Buffer.byteLength(jsons[0] as string)} bytes)`, calls: Math.max(1, Math.floor(PER_ROUND / 50)),
      now: (i) => entryValue(10, now + i, 10, jsons[i % 1000] as string).byteLength,
      before: (i) => joinedLength(10, now + i, 10, jsons[i % 1000] as string),
    })),
  ];
  const rows = pairs.map((pair) => {
    // One untimed pass of each warms the compiler.
    timed(pair.calls, pair.now);
    timed(pair.calls, pair.before);
    const nowNs: number[] = [];
    const beforeNs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (r % 2 === 0) {
        nowNs.push(timed(pair.calls, pair.now));
        beforeNs.push(timed(pair.calls, pair.before));
      } else {
        beforeNs.push(timed(pair.calls, pair.before));
        nowNs.push(timed(pair.calls, pair.now));
      }
    }
    return { name: pair.name, calls_per_round: pair.calls, now_ns: median(nowNs), before_ns: median(beforeNs), now_rounds: nowNs, before_rounds: beforeNs };
  });
  const file = writeResult('cache-key', { measured_at: new Date().toISOString(), command: 'npm run bench -- cache-key', node: process.version, rounds: ROUNDS, rows });
  console.log(`\nns per call, median of ${ROUNDS} alternating rounds`);
  console.log('| what | now | before | saved |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.name} | ${row.now_ns.toFixed(0)} | ${row.before_ns.toFixed(0)} | ${(row.before_ns - row.now_ns).toFixed(0)} |`);
  console.log(`\nwrote ${file}`);
}

main();
