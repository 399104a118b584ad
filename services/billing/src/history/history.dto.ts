import { AppError } from '@svc/errors';
import { IsOptional, IsString, Length, Matches, validateSync } from 'class-validator';
import { queryParams } from '../http/json-object';

/** `limit` (1..100, default 20) and `cursor` of the account-history lists. */
export class HistoryPageQuery {
  @IsOptional()
  @Matches(/^(100|[1-9][0-9]?)$/, { message: 'limit must be an integer from 1 to 100' })
  limit?: string;

  @IsOptional()
  @IsString()
  @Length(1, 200, { message: 'cursor is not valid' })
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
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^(\d{1,17})\|([A-Za-z0-9_]{1,64})$/.exec(text);
  if (match === null) throw new AppError('invalid_request', 'cursor is not valid');
  return { atMicros: BigInt(match[1] ?? '0'), id: match[2] ?? '' };
}

/** Query of GET /internal/activity and /internal/purchases; anything else is 400 invalid_request. */
export function parseHistoryPage(query: unknown): HistoryPage {
  const dto = Object.assign(new HistoryPageQuery(), queryParams(query, ['limit', 'cursor']));
  const problem = validateSync(dto)[0];
  const message = problem === undefined ? undefined : Object.values(problem.constraints ?? {})[0];
  if (problem !== undefined) throw new AppError('invalid_request', message ?? `${problem.property} is not valid`);
  return {
    limit: dto.limit === undefined ? DEFAULT_LIMIT : Number(dto.limit),
    after: dto.cursor === undefined ? null : decodeCursor(dto.cursor),
  };
}
