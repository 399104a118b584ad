import { AppError } from '@svc/errors';
import { pageLimit } from '@svc/http-edge';
import type { PageQueryDto } from '@svc/http-edge';

export interface PageMark {
  atMicros: bigint;
  id: string;
}

export interface HistoryPage {
  limit: number;
  /** The last row of the previous page: its time (microseconds since the epoch, exact) and id. */
  after: PageMark | null;
}

/** The cursor names the last row of a page: base64url of `<microseconds since the epoch>|<id>`. */
export function encodeCursor(mark: PageMark): string {
  return Buffer.from(`${mark.atMicros}|${mark.id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): PageMark {
  const match = /^(\d{1,17})\|([A-Za-z0-9_]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null) throw new AppError('invalid_request', 'cursor is not valid for this list');
  return { atMicros: BigInt(match[1] ?? '0'), id: match[2] ?? '' };
}

/** A validated `limit` and `cursor` (PageQueryDto) as the page to read. */
export function toHistoryPage(query: PageQueryDto): HistoryPage {
  return {
    limit: pageLimit(query),
    after: query.cursor === undefined ? null : decodeCursor(query.cursor),
  };
}
