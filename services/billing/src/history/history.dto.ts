import { AppError } from '@svc/errors';
import { IsCursor, IsIntegerText } from '@svc/http-edge';
import { ValidateIf } from 'class-validator';

const IfPresent = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** `limit` (1..100, default 20) and `cursor` of the account-history lists (the validation pipe checks them). */
export class HistoryPageQueryDto {
  @IfPresent()
  @IsIntegerText(1, 100)
  limit?: string;

  @IfPresent()
  @IsCursor()
  cursor?: string;
}

export interface PageMark {
  atMicros: bigint;
  id: string;
}

export interface HistoryPage {
  limit: number;
  /** The last row of the previous page: its time (microseconds since the epoch, exact) and id. */
  after: PageMark | null;
}

const DEFAULT_LIMIT = 20;

/** The cursor names the last row of a page: base64url of `<microseconds since the epoch>|<id>`. */
export function encodeCursor(mark: PageMark): string {
  return Buffer.from(`${mark.atMicros}|${mark.id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): PageMark {
  const match = /^(\d{1,17})\|([A-Za-z0-9_]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null) throw new AppError('invalid_request', 'cursor is not valid for this list');
  return { atMicros: BigInt(match[1] ?? '0'), id: match[2] ?? '' };
}

export function toHistoryPage(query: HistoryPageQueryDto): HistoryPage {
  return {
    limit: query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit),
    after: query.cursor === undefined ? null : decodeCursor(query.cursor),
  };
}
