/** Turning provider fields into the normalized result's fields. */

const NO_ZONE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/;

/**
 * A provider date as RFC 3339 UTC (`2026-01-02T00:00:00Z`), or null when absent or not
 * parseable. Dates without a zone (Brave's `page_age`) are taken as UTC.
 */
export function toPublishedAt(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim();
  let ms: number;
  if (NO_ZONE.test(text)) ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : `${text}Z`);
  else if (/^\d{4}-\d{2}-\d{2}T/.test(text) || /^[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} /.test(text)) ms = Date.parse(text);
  else return null;
  if (!Number.isFinite(ms)) return null;
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

export function toScore(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' };

/** Drops HTML tags (Brave wraps matches in <strong>) and decodes the common entities. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_match, name: string) => ENTITIES[name] ?? '')
    .trim();
}

export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
