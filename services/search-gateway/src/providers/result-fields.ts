/** Turning provider fields into the normalized result's fields. */

const NO_ZONE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/;
/** Already RFC 3339 UTC, to the second or the millisecond: kept as it is once it names a real day (the hot path). */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{3})?Z$/;

/**
 * A provider date as RFC 3339 UTC (`2026-01-02T00:00:00Z`), or null when absent or not
 * parseable. Dates without a zone (Brave's `page_age`) are taken as UTC.
 */
export function toPublishedAt(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  if (CANONICAL_UTC.test(value)) {
    if (!isCalendarDate(value)) return null;
    return value.length === 24 && value.endsWith('.000Z') ? `${value.slice(0, 19)}Z` : value;
  }
  const text = value.trim();
  if (text === '') return null;
  let ms: number;
  if (NO_ZONE.test(text)) ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : `${text}Z`);
  else if (/^\d{4}-\d{2}-\d{2}T/.test(text) || /^[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} /.test(text)) ms = Date.parse(text);
  else return null;
  if (!Number.isFinite(ms)) return null;
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/** Date.parse rolls 2026-02-30 over to March; a canonical date must name a real day. */
function isCalendarDate(text: string): boolean {
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** The number written by `length` ASCII digits at `start` (the caller's pattern already matched them). */
function digits(text: string, start: number, length: number): number {
  let n = 0;
  for (let i = start; i < start + length; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Gregorian: February has 29 days in years divisible by 4, except centuries not divisible by 400. */
function daysInMonth(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1] ?? 0;
}

export function toScore(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** http(s), a host of letters, digits, dots and dashes, an optional port, then printable ASCII. */
const SIMPLE_HTTP_URL = /^https?:\/\/[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::\d{1,5})?(?:[/?#][\x21-\x7e]*)?$/i;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** Drops HTML tags (Brave wraps matches in <strong>) and decodes the common entities. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  if (!value.includes('<') && !value.includes('&')) return value.trim();
  return value
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_match, name: string) => ENTITIES[name] ?? '')
    .trim();
}

export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  // Most results are plain absolute URLs: accept those without building a URL object.
  if (SIMPLE_HTTP_URL.test(value)) return true;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * `text` cut to at most `max` characters (UTF-16 code units), never between the two halves of
 * a surrogate pair (a cut there would leave a lone half: an emoji is kept whole or dropped).
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** Passages (highlights) cut to at most `max` characters in all: the last one kept is cut, the rest dropped. */
export function cutPassages(passages: readonly string[], max: number): { passages: string[]; truncated: boolean } {
  const out: string[] = [];
  let left = max;
  for (const passage of passages) {
    if (passage.length <= left) {
      out.push(passage);
      left -= passage.length;
      continue;
    }
    if (left > 0) out.push(cutText(passage, left));
    return { passages: out, truncated: true };
  }
  return { passages: out, truncated: false };
}
