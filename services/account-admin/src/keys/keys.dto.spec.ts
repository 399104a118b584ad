import { AppError } from '@svc/errors';
import { DtoValidationPipe } from '@svc/http-edge';
import type { ArgumentMetadata } from '@nestjs/common';
import { KeyBodyDto, ListQueryDto, toKeyInput, toListQuery } from './keys.dto';

const pipe = new DtoValidationPipe();
const asBody = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });
const asQuery = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype });

async function keyBody(raw: unknown): Promise<KeyBodyDto> {
  return (await pipe.transform(raw, asBody(KeyBodyDto))) as KeyBodyDto;
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error: unknown = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

describe('KeyBodyDto (POST and PATCH /v1/keys bodies)', () => {
  it('reads every field into integer micro-USD and dates', async () => {
    const body = await keyBody(JSON.stringify({ name: 'n', limit_usd: 0.000001, limit_reset: 'weekly', expires_at: '2100-06-01T02:00:00+01:00', disabled: true }));
    expect(toKeyInput(body)).toEqual({ name: 'n', limitMicros: 1, limitReset: 'weekly', expiresAt: new Date('2100-06-01T01:00:00Z'), disabled: true });
    expect(toKeyInput(await keyBody({ limit_usd: null, expires_at: null, limit_reset: null }))).toEqual({ limitMicros: null, expiresAt: null, limitReset: null });
    expect(toKeyInput(await keyBody(''))).toEqual({});
  });

  it.each([
    [{ expires_at: '2020-06-01T00:00:00Z' }, 'expires_at must be in the future'],
    [{ expires_at: '2126-13-01T00:00:00Z' }, 'RFC 3339'],
    [{ expires_at: '2127-02-29T00:00:00Z' }, 'RFC 3339'],
    [{ expires_at: '2127-01-01 00:00:00Z' }, 'RFC 3339'],
    [{ expires_at: 1767225600000 }, 'RFC 3339'],
    [{ limit_usd: 0 }, 'limit_usd'],
    [{ limit_usd: 0.0000001 }, 'at most 6 decimals'],
    [{ limit_usd: '5' }, 'limit_usd'],
    [{ limit_reset: 'hourly' }, 'limit_reset'],
    [{ disabled: 'yes' }, 'disabled'],
    [{ name: null }, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 'a\u0000b' }, 'name must not contain the character U+0000'],
    [{ nmae: 'typo' }, 'unknown field "nmae"'],
    [[1, 2], 'must be a JSON object'],
    ['{"name":', 'not valid JSON'],
    ['"text"', 'must be a JSON object'],
  ])('rejects %j naming the problem', async (raw, named) => {
    const error = await rejection(keyBody(typeof raw === 'string' ? raw : JSON.stringify(raw)));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain(named);
  });
});

describe('ListQueryDto (limit and cursor)', () => {
  it('defaults to 20 and no cursor', async () => {
    expect(toListQuery((await pipe.transform({}, asQuery(ListQueryDto))) as ListQueryDto)).toEqual({ limit: 20, cursor: null });
    expect(toListQuery((await pipe.transform({ limit: '100', cursor: 'abc' }, asQuery(ListQueryDto))) as ListQueryDto)).toEqual({ limit: 100, cursor: 'abc' });
  });

  it.each([
    [{ limit: '0' }, 'limit must be an integer from 1 to 100'],
    [{ limit: '1e2' }, 'limit must be an integer from 1 to 100'],
    [{ limit: ['1', '2'] }, 'query parameter "limit" must be given once'],
    [{ cursor: '' }, 'cursor is not valid'],
    [{ cursor: 'a\u0000' }, 'cursor must not contain the character U+0000'],
    [{ other: '1' }, 'unknown query parameter "other"'],
  ])('rejects %j', async (query, named) => {
    const error = await rejection(pipe.transform(query, asQuery(ListQueryDto)));
    expect(error.message).toContain(named);
  });
});
