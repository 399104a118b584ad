/** Display helpers: money in USD, times in the reader's locale (UTC dates for day buckets). */

/**
 * A USD amount: whole cents, or with `precise` (and for an amount under a cent) every
 * micro-USD the API states (money is exact to 6 decimals: a page read at $0.00125 shows so).
 */
export function usd(value: number | null | undefined, { precise = false } = {}): string {
  if (value === null || value === undefined) return '—';
  const digits = precise || (value !== 0 && Math.abs(value) < 0.01) ? 6 : 2;
  return new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: digits }).format(value);
}

export function dateTime(iso: string | null | undefined, empty = '—'): string {
  if (iso === null || iso === undefined) return empty;
  return new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}

/** YYYY-MM-DD of a UTC day. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function daysBefore(date: Date, days: number): Date {
  return new Date(date.getTime() - days * 86_400_000);
}

/** Every UTC day from..to inclusive, as YYYY-MM-DD. */
export function dayRange(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) out.push(utcDay(new Date(t)));
  return out;
}

export function resetLabel(reset: string | null): string {
  switch (reset) {
    case 'daily': return 'per day';
    case 'weekly': return 'per week';
    case 'monthly': return 'per month';
    default: return 'total';
  }
}

/** A datetime-local input value (local time) as RFC 3339 UTC, or null when empty. */
export function localInputToIso(value: string): string | null {
  if (value === '') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 → a datetime-local input value in local time. */
export function isoToLocalInput(iso: string | null): string {
  if (iso === null) return '';
  const date = new Date(iso);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
