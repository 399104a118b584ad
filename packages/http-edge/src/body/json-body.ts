import { AppError } from '@svc/errors';

/**
 * Request bodies at the edge, before anything walks them: a JSON body nested deeper than a
 * limit is refused by a scan of its raw bytes (no parse, no recursion), and keys that name
 * JavaScript's object machinery are refused wherever they appear.
 */

/** The deepest nesting of objects and arrays a request body may have (HTTP_MAX_BODY_DEPTH). */
export const DEFAULT_MAX_BODY_DEPTH = 32;

/** Keys no body or query may carry: they name the object machinery, never a field. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the JSON text opens more than `maxDepth` objects or arrays inside each other.
 * One pass over the bytes (or UTF-16 units): brackets inside strings do not count. In UTF-8
 * the bytes of `"`, `\`, `[`, `]`, `{`, `}` never occur inside a multi-byte character, so a
 * Buffer is scanned as it arrived. Text that is not JSON is left to the parser.
 */
export function bodyDepthExceeds(body: string | Uint8Array, maxDepth: number): boolean {
  const text = typeof body === 'string';
  const length = body.length;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = text ? (body as string).charCodeAt(i) : ((body as Uint8Array)[i] ?? 0);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The refusal of a body nested too deep (400 invalid_request). */
export function tooDeepError(maxDepth: number): AppError {
  return new AppError('invalid_request', `the body is nested deeper than ${maxDepth} levels of objects and arrays`);
}

/** Throws the 400 of a body nested deeper than `maxDepth`. */
export function checkBodyDepth(body: string | Uint8Array, maxDepth: number): void {
  if (bodyDepthExceeds(body, maxDepth)) throw tooDeepError(maxDepth);
}

/**
 * A JSON request body: the depth scan, then JSON.parse (which makes `__proto__` an own
 * property, never the prototype; the validation refuses it by name). An empty body is
 * undefined.
 */
export function parseJsonBody(body: string | Buffer, maxDepth: number): unknown {
  checkBodyDepth(body, maxDepth);
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('invalid_request', 'the body is not valid JSON');
  }
}

/**
 * The path of the first key in FORBIDDEN_KEYS (e.g. `limit_usd.__proto__`), or null. Walks
 * a parsed body, so only after the depth check (its recursion is bounded by it).
 */
export function forbiddenKeyPath(value: unknown, path = ''): string | null {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = forbiddenKeyPath(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (FORBIDDEN_KEYS.has(key)) return at;
    const found = forbiddenKeyPath((value as Record<string, unknown>)[key], at);
    if (found !== null) return found;
  }
  return null;
}

/** Fastify's own error for an empty JSON body (the edge words it: "the body is empty; ..."). */
class EmptyJsonBodyError extends Error {
  readonly code = 'FST_ERR_CTP_EMPTY_JSON_BODY';
  readonly statusCode = 400;
}

/** The part of a Fastify instance a body parser needs (no import of Fastify's types here). */
interface ParserHost {
  hasContentTypeParser(type: string): boolean;
  removeContentTypeParser(type: string): void;
  addContentTypeParser(
    type: string,
    options: { parseAs: 'buffer' },
    parser: (request: never, body: Buffer, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
}

export interface JsonBodyParserOptions {
  maxBodyDepth: number;
  /** Told of every JSON body's exact bytes before it is parsed (e.g. to verify a signature). */
  keepRaw?: (request: never, bytes: Buffer) => void;
}

/**
 * Replaces the instance's `application/json` parser with the edge's: the bytes are scanned
 * for depth (400 above `maxBodyDepth`) before JSON.parse sees them; an empty body is 400;
 * text that is not JSON is 400. Call before routes are added (scopes inherit it).
 */
export function installJsonBodyParser(fastify: ParserHost, options: JsonBodyParserOptions): void {
  const { maxBodyDepth, keepRaw } = options;
  if (fastify.hasContentTypeParser('application/json')) fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (keepRaw !== undefined) keepRaw(request, body);
    if (body.length === 0) {
      done(new EmptyJsonBodyError('body is empty'), undefined);
      return;
    }
    try {
      const parsed = parseJsonBody(body, maxBodyDepth);
      if (parsed === undefined) done(new EmptyJsonBodyError('body is empty'), undefined);
      else done(null, parsed);
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
