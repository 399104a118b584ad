import { LIMITS } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isUsdAmount } from '@svc/money';
import { isEmail, registerDecorator, ValidateIf } from 'class-validator';
import type { ValidationArguments, ValidationOptions } from 'class-validator';

/**
 * Small validators for what the platform needs and class-validator does not say itself.
 * Each names the field in its message and never echoes the value (it may be a secret).
 */

function decorator(
  name: string,
  check: (value: unknown) => boolean,
  message: (property: string, value: unknown) => string,
  options?: ValidationOptions,
): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: (args: ValidationArguments) => message(args.property, args.value), ...options },
      validator: { validate: (value: unknown) => check(value) },
    });
  };
}

export interface UsdAmountOptions {
  /** Smallest accepted amount; with `exclusiveMin`, the amount must be above it. */
  min: number;
  max: number;
  exclusiveMin?: boolean;
}

/** A USD amount as a JSON number: finite, in range, at most 6 decimals (one micro-dollar). */
export function IsUsdAmount(range: UsdAmountOptions, options?: ValidationOptions): PropertyDecorator {
  const low = range.exclusiveMin === true ? `greater than ${range.min}` : `at least ${range.min}`;
  return decorator(
    'isUsdAmount',
    (value) =>
      typeof value === 'number' &&
      Number.isFinite(value) &&
      (range.exclusiveMin === true ? value > range.min : value >= range.min) &&
      value <= range.max &&
      isUsdAmount(value),
    (property) => `${property} must be a number ${low} and at most ${range.max}, with at most 6 decimals`,
    options,
  );
}

/** A UTF-16 code unit of a surrogate pair standing alone: no UTF-8 text (and no email address) can hold it. */
const LONE_SURROGATE = /\p{Cs}/u;

/** A string without a lone UTF-16 surrogate: text that UTF-8 can carry (String.prototype.isWellFormed, ES2024). */
export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/**
 * An email address (class-validator's isEmail). A string holding a lone surrogate is not
 * one: it is refused before isEmail, whose byte-length check runs encodeURI and throws
 * URIError on it (a 500 where a 400 belongs).
 */
export function isEmailAddress(value: unknown): value is string {
  return typeof value === 'string' && isWellFormedText(value) && isEmail(value);
}

export function IsEmailAddress(options?: ValidationOptions): PropertyDecorator {
  return decorator('isEmail', isEmailAddress, (property) => `${property} must be an email address`, options);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** An RFC 3339 timestamp with a real calendar date and time, as epoch ms; null if it is not one. */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  // Years 0001-9999 only (RFC 3339's range; year 0000 is not a calendar year).
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(text.toUpperCase());
  // An offset must not carry the instant out of years 0001-9999 in UTC either.
  return Number.isFinite(ms) && ms >= MIN_RFC3339_MS && ms <= MAX_RFC3339_MS ? ms : null;
}

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the instants RFC 3339 can write in UTC. */
const MIN_RFC3339_MS = -62_135_596_800_000;
const MAX_RFC3339_MS = 253_402_300_799_999;

/** An RFC 3339 timestamp after the moment of validation (e.g. a key's expiry). */
/** An RFC 3339 timestamp with an offset, years 0001-9999 (a bound of a time range). */
export function IsTimestamp(options?: ValidationOptions): PropertyDecorator {
  return decorator(
    'isTimestamp',
    (value) => typeof value === 'string' && parseRfc3339(value) !== null,
    (property) => `${property} must be an RFC 3339 timestamp (e.g. 2030-01-01T00:00:00Z)`,
    options,
  );
}

export function IsFutureTimestamp(options?: ValidationOptions): PropertyDecorator {
  return decorator(
    'isFutureTimestamp',
    (value) => {
      if (typeof value !== 'string') return false;
      const ms = parseRfc3339(value);
      return ms !== null && ms > Date.now();
    },
    (property, value) =>
      typeof value === 'string' && parseRfc3339(value) !== null
        ? `${property} must be in the future`
        : `${property} must be an RFC 3339 timestamp (e.g. 2030-01-01T00:00:00Z) or null`,
    options,
  );
}

/** A calendar date `YYYY-MM-DD` that exists (2026-02-30 does not), in years 0001-9999. */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value) || value.startsWith('0000')) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}

export function IsCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return decorator('isCalendarDate', isCalendarDate, (property) => `${property} must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31`, options);
}

/** A whole number in a range, written as a query-string value (e.g. `limit=20`). */
export function IsIntegerText(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return decorator(
    'isIntegerText',
    (value) => typeof value === 'string' && /^\d{1,9}$/.test(value) && Number(value) >= min && Number(value) <= max,
    (property) => `${property} must be an integer from ${min} to ${max}`,
    options,
  );
}

/** An opaque list cursor: base64url text of bounded length (its content is checked where it is decoded). */
export function IsCursor(options?: ValidationOptions): PropertyDecorator {
  return decorator(
    'isCursor',
    (value) => typeof value === 'string' && /^[A-Za-z0-9_-]{1,512}$/.test(value),
    () => 'cursor is not valid for this list',
    options,
  );
}

/** Text without U+0000 (PostgreSQL cannot store it). The validation pipe applies this to every string. */
export function hasNullCharacter(value: string): boolean {
  return value.includes('\u0000');
}

export function NoNullCharacter(options?: ValidationOptions): PropertyDecorator {
  return decorator(
    'noNullCharacter',
    (value) => typeof value !== 'string' || !hasNullCharacter(value),
    (property) => `${property} must not contain the character U+0000`,
    options,
  );
}

/** A string of `min`..`max` characters (code points, not UTF-16 units). */
export function IsText(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return decorator(
    'isText',
    (value) => {
      if (typeof value !== 'string') return false;
      const length = [...value].length;
      return length >= min && length <= max;
    },
    (property) => `${property} must be a string of ${min} to ${max} characters`,
    options,
  );
}

/** The earliest and latest instants a JavaScript Date can hold (±8.64e15 ms). */
export const MAX_DATE_MS = 8_640_000_000_000_000;

/** True when `ms` is a whole number of milliseconds a Date can represent. */
export function isRepresentableTime(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isSafeInteger(ms) && Math.abs(ms) <= MAX_DATE_MS;
}

/** A list's position after its last item: a time (Unix ms) and the item's id. */
export interface TimeIdPosition {
  readonly atMs: number;
  readonly id: string;
}

/** The opaque cursor of a list ordered by time then id (base64url JSON `{"t", "i"}`). */
export function encodeTimeIdCursor(position: TimeIdPosition): string {
  return Buffer.from(JSON.stringify({ t: position.atMs, i: position.id }), 'utf8').toString('base64url');
}

/**
 * The position in a cursor made by encodeTimeIdCursor; 400 invalid_request when it is not one,
 * or when its id is not what `isValidId` accepts (the list's id kind).
 */
export function decodeTimeIdCursor(cursor: string, isValidId: (id: unknown) => id is string): TimeIdPosition {
  const invalid = new AppError('invalid_request', 'cursor is not valid');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (typeof value !== 'object' || value === null) throw invalid;
  const { t, i } = value as { t?: unknown; i?: unknown };
  if (!isRepresentableTime(t) || t < 0 || !isValidId(i)) throw invalid;
  return { atMs: t, id: i };
}

/** Validate the field only when the body has it (so `null` still fails a non-nullable field). */
export function IfPresent(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/**
 * The list query of every paged listing: `limit` (LIMITS.pageSize) and an opaque `cursor`.
 * Its OpenAPI properties are tools/openapi's (this class is the gateway's too, which does not
 * load @nestjs/swagger), from the same LIMITS.
 */
export class PageQueryDto {
  @IfPresent()
  @IsIntegerText(LIMITS.pageSize.min, LIMITS.pageSize.max)
  limit?: string;

  @IfPresent()
  @IsCursor()
  cursor?: string;
}

export const DEFAULT_PAGE_LIMIT = LIMITS.pageSize.default;

/** The page size a validated PageQueryDto asks for. */
export function pageLimit(query: PageQueryDto): number {
  return query.limit === undefined ? DEFAULT_PAGE_LIMIT : Number(query.limit);
}

/**
 * A list of `min`..`max` distinct strings, each at most `itemMax` characters and passing
 * `item` (e.g. a CIDR, a model id); the message names the first bad entry.
 */
export function IsStringList(bounds: { min: number; max: number }, itemMax: number, item: (value: string) => boolean, what: string, options?: ValidationOptions): PropertyDecorator {
  const problem = (value: unknown): string | null => {
    if (!Array.isArray(value)) return 'must be an array';
    if (value.length < bounds.min || value.length > bounds.max) return `must hold ${bounds.min} to ${bounds.max} entries`;
    const seen = new Set<string>();
    for (const entry of value) {
      if (typeof entry !== 'string' || entry.length > itemMax || !item(entry)) {
        return `has an entry that is not ${what}: ${JSON.stringify(typeof entry === 'string' ? entry.slice(0, itemMax) : entry)}`;
      }
      if (seen.has(entry)) return `lists ${JSON.stringify(entry)} twice`;
      seen.add(entry);
    }
    return null;
  };
  return decorator('isStringList', (value) => problem(value) === null, (property, value) => `${property} ${problem(value) ?? 'is not valid'}`, options);
}
