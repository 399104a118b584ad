import { Injectable, ValidationPipe } from '@nestjs/common';
import type { ArgumentMetadata, PipeTransform } from '@nestjs/common';
import { AppError } from '@svc/errors';
import type { ValidationError } from 'class-validator';
import { checkBodyDepth, DEFAULT_MAX_BODY_DEPTH, FORBIDDEN_KEYS, forbiddenKeyPath } from '../body/json-body';
import { hasNullCharacter } from './validators';

const PRIMITIVES: readonly unknown[] = [String, Boolean, Number, Array, Object, Buffer, undefined];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The first problem of a class-validator result, as a message naming the field. */
export function describeValidationErrors(errors: readonly ValidationError[], where: 'body' | 'query', parent = ''): string {
  for (const error of errors) {
    const field = parent === '' ? error.property : `${parent}.${error.property}`;
    const constraints = error.constraints ?? {};
    if (constraints.whitelistValidation !== undefined) {
      return where === 'query' ? `unknown query parameter "${field}"` : `unknown field "${field}"`;
    }
    const first = Object.values(constraints)[0];
    if (first !== undefined) return parent === '' ? first : first.replace(error.property, field);
    if (error.children !== undefined && error.children.length > 0) return describeValidationErrors(error.children, where, field);
  }
  return `the ${where} is not valid`;
}

/** The path of the first string holding U+0000, or null. */
function nullCharacterPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return hasNullCharacter(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nullCharacterPath(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const found = nullCharacterPath(inner, path === '' ? key : `${path}.${key}`);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * The one validation pipe of the control plane: a DTO class validated by class-validator
 * with `whitelist` and `forbidNonWhitelisted`, every problem a 400 invalid_request naming
 * the field. Before class-validator runs it:
 * - reads a body that arrived as text (a JSON object; an empty body is `{}`),
 * - refuses a body that is not a JSON object,
 * - refuses a body nested deeper than `maxBodyDepth` (by a scan of its text, before parsing),
 * - refuses a query parameter given more than once,
 * - refuses the keys `__proto__`, `constructor` and `prototype` anywhere as unknown fields,
 * - refuses U+0000 in any string of the body or query (PostgreSQL cannot store it).
 * Parameters typed as anything but a DTO class pass through untouched.
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  private readonly pipes = { body: validationPipeFor('body'), query: validationPipeFor('query') };
  private readonly maxBodyDepth: number;

  constructor(options: { maxBodyDepth?: number } = {}) {
    this.maxBodyDepth = options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH;
  }

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type !== 'body' && metadata.type !== 'query') || PRIMITIVES.includes(metadata.metatype)) return value;
    const where = metadata.type;
    const input = where === 'body' ? readBody(value, this.maxBodyDepth) : readQuery(value);
    const forbidden = forbiddenKeyPath(input);
    if (forbidden !== null) throw new AppError('invalid_request', where === 'query' ? `unknown query parameter "${forbidden}"` : `unknown field "${forbidden}"`);
    const nul = nullCharacterPath(input, '');
    if (nul !== null) throw new AppError('invalid_request', `${nul} must not contain the character U+0000`);
    return this.pipes[where].transform(input, metadata);
  }
}

function validationPipeFor(where: 'body' | 'query'): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new AppError('invalid_request', describeValidationErrors(errors, where)),
  });
}

function readBody(value: unknown, maxBodyDepth: number): Record<string, unknown> {
  let parsed: unknown = value;
  if (value === undefined || value === null) return {};
  if (Buffer.isBuffer(value)) parsed = value.toString('utf8');
  if (typeof parsed === 'string') {
    if (parsed.trim() === '') return {};
    checkBodyDepth(parsed, maxBodyDepth);
    try {
      parsed = JSON.parse(parsed);
    } catch {
      throw new AppError('invalid_request', 'the body is not valid JSON');
    }
  }
  if (!isPlainObject(parsed)) throw new AppError('invalid_request', 'the body must be a JSON object');
  return parsed;
}

function readQuery(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null || typeof value !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
    // Checked before the copy below, where `out.__proto__ = ...` would not make a key.
    if (FORBIDDEN_KEYS.has(name)) throw new AppError('invalid_request', `unknown query parameter "${name}"`);
    if (typeof item !== 'string') throw new AppError('invalid_request', `query parameter "${name}" must be given once`);
    out[name] = item;
  }
  return out;
}

const sharedPipe = new DtoValidationPipe();

/** Runs the pipe outside Nest (unit tests, plain Fastify routes): the DTO, or the AppError it throws. */
export async function validateDto<T extends object>(metatype: new () => T, value: unknown, where: 'body' | 'query'): Promise<T> {
  return (await sharedPipe.transform(value, { type: where, metatype })) as T;
}
