import Fastify from 'fastify';
import { IsOptional } from 'class-validator';
import { AppError } from '@svc/errors';
import { installEdge } from '../edge';
import { sendError } from '../error-reply';
import { IfPresent, IsCalendarDate, IsFutureTimestamp, IsText, isCalendarDate, parseRfc3339 } from '../validation/validators';
import { validateDto } from '../validation/validation.pipe';
import { bodyDepthExceeds, DEFAULT_MAX_BODY_DEPTH, forbiddenKeyPath, parseJsonBody } from './json-body';
import pino from 'pino';

const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const arrays = (depth: number): string => `{"name":${'['.repeat(depth)}1${']'.repeat(depth)}}`;

class NameBody {
  @IfPresent()
  @IsText(1, 100)
  name?: string;

  @IsOptional()
  @IsFutureTimestamp()
  expires_at?: string | null;
}

class DayQuery {
  @IfPresent()
  @IsCalendarDate()
  from?: string;
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('invalid_request');
  return error as AppError;
}

describe('the depth scan', () => {
  it('counts objects and arrays, not brackets inside strings or after escapes', () => {
    expect(bodyDepthExceeds(nested(32), 32)).toBe(false);
    expect(bodyDepthExceeds(nested(33), 32)).toBe(true);
    expect(bodyDepthExceeds(arrays(31), 32)).toBe(false);
    expect(bodyDepthExceeds(arrays(32), 32)).toBe(true);
    expect(bodyDepthExceeds(`{"a":"${'['.repeat(1000)}"}`, 2)).toBe(false);
    expect(bodyDepthExceeds(`{"a":"\\"${'{'.repeat(50)}"}`, 2)).toBe(false);
    expect(bodyDepthExceeds(Buffer.from(`{"é😀":"${'{'.repeat(50)}","b":[[[]]]}`), 3)).toBe(true);
    expect(bodyDepthExceeds(Buffer.from(`{"é😀":"${'{'.repeat(50)}","b":[[]]}`), 3)).toBe(false);
  });

  it('refuses 5,000 levels before JSON.parse with the platform error, and parses a body within the limit', () => {
    expect(() => parseJsonBody(nested(5_000), DEFAULT_MAX_BODY_DEPTH)).toThrow(/nested deeper than 32/);
    expect(parseJsonBody(nested(3), DEFAULT_MAX_BODY_DEPTH)).toEqual({ a: { a: { a: 1 } } });
    expect(() => parseJsonBody('{"a":', DEFAULT_MAX_BODY_DEPTH)).toThrow('the body is not valid JSON');
  });

  it('finds __proto__, constructor and prototype keys at any depth', () => {
    expect(forbiddenKeyPath(JSON.parse('{"__proto__":1}'))).toBe('__proto__');
    expect(forbiddenKeyPath(JSON.parse('{"a":[{"constructor":{}}]}'))).toBe('a[0].constructor');
    expect(forbiddenKeyPath(JSON.parse('{"a":{"prototype":null}}'))).toBe('a.prototype');
    expect(forbiddenKeyPath(JSON.parse('{"a":"__proto__"}'))).toBeNull();
  });
});

describe('the validation pipe (every control-plane body and query)', () => {
  // Each of these was accepted or reached a 500 before issue 29's fix.
  it('refuses a body nested 5,000 levels deep (objects, or an array in a field) with 400 invalid_request', async () => {
    expect((await refusal(validateDto(NameBody, nested(5_000), 'body'))).message).toMatch(/nested deeper than 32/);
    expect((await refusal(validateDto(NameBody, arrays(5_000), 'body'))).message).toMatch(/nested deeper than 32/);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses the key %s as an unknown field, in a body and in a query', async (key) => {
    expect((await refusal(validateDto(NameBody, `{"${key}":1}`, 'body'))).message).toBe(`unknown field "${key}"`);
    expect((await refusal(validateDto(NameBody, JSON.parse(`{"name":"k","${key}":{"x":1}}`), 'body'))).message).toBe(`unknown field "${key}"`);
    expect((await refusal(validateDto(DayQuery, JSON.parse(`{"${key}":"1"}`), 'query'))).message).toBe(`unknown query parameter "${key}"`);
  });

  it('refuses dates outside years 0001-9999, naming the field', async () => {
    expect((await refusal(validateDto(DayQuery, { from: '0000-01-01' }, 'query'))).message).toMatch(/^from must be a date/);
    expect((await refusal(validateDto(NameBody, { expires_at: '0000-01-01T00:00:00Z' }, 'body'))).message).toMatch(/^expires_at/);
    // An offset that carries the instant past 9999-12-31 in UTC.
    expect((await refusal(validateDto(NameBody, { expires_at: '9999-12-31T23:30:00-01:00' }, 'body'))).message).toMatch(/^expires_at/);
    await expect(validateDto(DayQuery, { from: '0001-01-01' }, 'query')).resolves.toEqual({ from: '0001-01-01' });
    await expect(validateDto(DayQuery, { from: '9999-12-31' }, 'query')).resolves.toEqual({ from: '9999-12-31' });
    expect(isCalendarDate('0000-12-31')).toBe(false);
    expect(parseRfc3339('0000-01-01T00:00:00Z')).toBeNull();
    expect(parseRfc3339('0001-01-01T00:00:00Z')).toBe(-62_135_596_800_000);
    expect(parseRfc3339('9999-12-31T23:59:59Z')).toBe(Date.parse('9999-12-31T23:59:59Z'));
  });
});

describe('the edge JSON parser (plain Fastify routes: the gateway)', () => {
  async function app(maxBodyDepth?: number): Promise<ReturnType<typeof Fastify>> {
    const fastify = Fastify();
    const log = pino({ level: 'silent' });
    installEdge(fastify, log, undefined, maxBodyDepth === undefined ? {} : { maxBodyDepth });
    fastify.setErrorHandler((error, request, reply) => sendError(reply, request.id, error, log));
    fastify.post('/echo', async (request) => ({ body: request.body }));
    await fastify.ready();
    return fastify;
  }

  it('answers 400 invalid_request for a body deeper than the setting, and reads one at the limit', async () => {
    const fastify = await app();
    const deep = await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: nested(5_000) });
    expect(deep.statusCode).toBe(400);
    expect(deep.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringMatching(/nested deeper than 32/) } });
    const ok = await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: nested(32) });
    expect(ok.statusCode).toBe(200);
    const empty = await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
    const broken = await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"a":' });
    expect(broken.json()).toMatchObject({ error: { code: 'invalid_request', message: 'the body is not valid JSON' } });
    await fastify.close();
  });

  it('takes the limit from the setting', async () => {
    const fastify = await app(4);
    expect((await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: nested(5) })).statusCode).toBe(400);
    expect((await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: nested(4) })).statusCode).toBe(200);
    await fastify.close();
  });

  it('keeps __proto__ an own key (the prototype is never set), for the route schema to refuse', async () => {
    const fastify = await app();
    const answer = await fastify.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"polluted":true}}' });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBe('{"body":{"__proto__":{"polluted":true}}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await fastify.close();
  });
});
