import type { MeasuredText } from '../redis/resp-connection';
import { LEAD_MARK } from './cache.scripts';

/**
 * The values of an entry's key (docs/decisions/0023, "One key per entry"): an answer,
 * `<asked>|<stored at, Unix ms>|<count>|<results JSON>` (or the first format, without the
 * count), or a lead, `~<token>`, while one search calls the provider for it. An answer starts
 * with a digit, never with `~`. Pure functions: no Redis, no clock of their own.
 */

/** A stored answer as a lookup finds it: its results as the JSON text stored (never parsed here). */
export interface CachedAnswer {
  /** How many results the text holds. */
  readonly count: number;
  /** The results, a JSON array. */
  readonly json: string;
  /** Whole seconds since it was stored (never negative). */
  readonly ageS: number;
}

/** An entry as Redis holds it, decoded: the answer, the result count it was asked for, when it was stored (Unix ms). */
export interface DecodedEntry {
  readonly answer: CachedAnswer;
  readonly asked: number;
  readonly storedAt: number;
}

/**
 * An answer's value in Redis, `<asked>|<stored at>|<count>|<results JSON>`, with its UTF-8
 * length. The prefix is ASCII (digits and bars), so only the results (already one flat string)
 * are measured. Measuring the joined text first copied it into a new flat string of its own,
 * about 5 KB a miss; the joined measure took about 1 µs more (measured by a benchmark since removed, decision 0023).
 */
export function entryValue(asked: number, storedAt: number, count: number, json: string): MeasuredText {
  const prefix = `${asked}|${storedAt}|${count}|`;
  return { text: prefix + json, byteLength: prefix.length + Buffer.byteLength(json) };
}

/** The value of a lead held by `token`. */
export function leadValue(token: string): string {
  return LEAD_MARK + token;
}

/** Whether an entry's value is a lead (a search calling the provider for it), not an answer. */
export function isLead(value: string): boolean {
  return value.startsWith(LEAD_MARK);
}

/**
 * An answer's value decoded, its age taken at `now` (Unix ms); null when it is not an answer.
 * The results are not parsed: a hit's reply carries the text. An entry of the first format,
 * `<asked>|<stored at>|<results JSON>` (a gateway of an earlier build may still be storing
 * them), is parsed for its count.
 */
export function decodeEntry(value: string, now: number): DecodedEntry | null {
  const first = value.indexOf('|');
  const second = value.indexOf('|', first + 1);
  if (first < 0 || second < 0) return null;
  const asked = Number(value.slice(0, first));
  const storedAt = Number(value.slice(first + 1, second));
  const ageS = Math.max(0, Math.floor((now - storedAt) / 1000));
  if (value.charCodeAt(second + 1) === 0x5b /* [ */) {
    try {
      const json = value.slice(second + 1);
      const results = JSON.parse(json) as unknown;
      return Array.isArray(results) ? { answer: { count: results.length, json, ageS }, asked, storedAt } : null;
    } catch {
      return null;
    }
  }
  const third = value.indexOf('|', second + 1);
  const count = Number(value.slice(second + 1, third));
  if (third < 0 || !Number.isSafeInteger(count) || count < 0 || value.charCodeAt(third + 1) !== 0x5b) return null;
  return { answer: { count, json: value.slice(third + 1), ageS }, asked, storedAt };
}

/** An answer's value decoded when it serves `asked` results at most `maxAgeMs` old at `now` (null: any age); else null. */
export function servingEntry(value: string, asked: number, maxAgeMs: number | null, now: number): DecodedEntry | null {
  const decoded = decodeEntry(value, now);
  if (decoded === null || !(decoded.asked >= asked)) return null;
  if (maxAgeMs !== null && !(now - decoded.storedAt <= maxAgeMs)) return null;
  return decoded;
}
