import { createRequire } from 'node:module';
import { applyDecorators } from '@nestjs/common';
import type { ApiPropertyOptions } from '@nestjs/swagger';
import { idPatternSource } from '@svc/ids';
import type { IdKind } from '@svc/ids';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsBoolean, IsDefined, IsIn, IsString, IsUrl, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import type { ValidationArguments, ValidationOptions } from 'class-validator';
import { IsCalendarDate, IsEmailAddress, IsFutureTimestamp, IsStringList, IsText, IsTimestamp, IsUsdAmount } from './validators';

/**
 * The house field decorators: one declaration per DTO field writes both its class-validator
 * rules (what the validation pipe enforces) and its OpenAPI property (what the generated
 * document says), so the two cannot drift. Bounds come from @svc/contracts' LIMITS and id
 * formats from @svc/ids; a DTO names them, never a literal.
 *
 * Presence: `required` (the default), `optional` (absent is fine, null is checked like any
 * value and refused), `nullable` (absent and null are fine; null usually clears).
 *
 * @nestjs/swagger is loaded on first use, so a service whose DTOs use none of these (the
 * gateway) never loads it.
 */
export type Presence = 'required' | 'optional' | 'nullable';

export interface FieldOptions {
  presence?: Presence;
  description?: string;
  /** The message of every failure of this field, instead of each rule's own. */
  message?: string | ((args: ValidationArguments) => string);
  /** For a required field: the message when it is absent or null (else the field's rule speaks). */
  missingMessage?: string;
}

type Swagger = typeof import('@nestjs/swagger');
let swagger: Swagger | undefined;
function apiProperty(options: ApiPropertyOptions): PropertyDecorator {
  swagger ??= createRequire(__filename)('@nestjs/swagger') as Swagger;
  return swagger.ApiProperty(options);
}

/** The OpenAPI property and the presence rule of a field, then its rules in the order they speak. */
function field(options: FieldOptions, schema: ApiPropertyOptions, rules: PropertyDecorator[]): PropertyDecorator {
  const presence = options.presence ?? 'required';
  const property = { ...schema, required: presence === 'required' } as ApiPropertyOptions;
  if (presence === 'nullable') Object.assign(property, { nullable: true });
  if (options.description !== undefined) Object.assign(property, { description: options.description });
  const decorators: PropertyDecorator[] = [apiProperty(property)];
  if (presence === 'optional') decorators.push(ValidateIf((_object: object, value: unknown) => value !== undefined));
  if (presence === 'nullable') decorators.push(ValidateIf((_object: object, value: unknown) => value !== undefined && value !== null));
  if (presence === 'required' && options.missingMessage !== undefined) decorators.push(IsDefined({ message: options.missingMessage }));
  return applyDecorators(...decorators, ...rules);
}

const withMessage = (options: FieldOptions, own?: string): ValidationOptions | undefined => {
  const message = options.message ?? own;
  return message === undefined ? undefined : { message };
};

/** Text of `min`..`max` characters (code points). */
export function TextField(bounds: { min: number; max: number }, options: FieldOptions = {}): PropertyDecorator {
  return field(options, { type: 'string', minLength: bounds.min, maxLength: bounds.max }, [IsText(bounds.min, bounds.max, withMessage(options))]);
}

export interface StringFieldOptions extends FieldOptions {
  min?: number;
  max: number;
  /** A pattern the value must match (also the OpenAPI `pattern`). */
  pattern?: RegExp;
  format?: string;
  /** Messages of single rules (else `message`, else the rule's own). */
  typeMessage?: string;
  tooShortMessage?: string;
  tooLongMessage?: string;
  patternMessage?: string;
  /** The OpenAPI pattern when the value's pattern is not one OpenAPI should state. */
  documentPattern?: false;
  /** The rules' order, when a message depends on which speaks first (default: type, length, pattern). */
  order?: readonly ('type' | 'min' | 'max' | 'pattern' | 'email')[];
  /** Checked as an email address (isEmailAddress: class-validator's isEmail on well-formed text) too. */
  email?: boolean;
}

/** A string checked by UTF-16 length and optionally a pattern; each rule may have its own message. */
export function StringField(options: StringFieldOptions): PropertyDecorator {
  const schema: Record<string, unknown> = { type: 'string' };
  if (options.format !== undefined) schema.format = options.format;
  if (options.min !== undefined) schema.minLength = options.min;
  schema.maxLength = options.max;
  if (options.pattern !== undefined && options.documentPattern !== false) schema.pattern = options.pattern.source;
  const rules: Record<string, PropertyDecorator | undefined> = {
    type: IsString(withMessage(options, options.typeMessage)),
    min: options.min === undefined ? undefined : MinLength(options.min, withMessage(options, options.tooShortMessage)),
    max: MaxLength(options.max, withMessage(options, options.tooLongMessage)),
    pattern: options.pattern === undefined ? undefined : Matches(options.pattern, withMessage(options, options.patternMessage)),
    email: options.email === true ? IsEmailAddress(withMessage(options)) : undefined,
  };
  const order = options.order ?? ['type', 'min', 'max', 'pattern', 'email'];
  return field(options, schema as ApiPropertyOptions, order.map((name) => rules[name]).filter((rule): rule is PropertyDecorator => rule !== undefined));
}

/** A USD amount as a JSON number: in range, at most 6 decimals; `exclusiveMin`: above `min`. */
export function UsdField(range: { min: number; max: number; exclusiveMin?: boolean }, options: FieldOptions = {}, extra: PropertyDecorator[] = []): PropertyDecorator {
  // OpenAPI 3.1 (JSON Schema): exclusiveMinimum is the bound itself.
  const schema: Record<string, unknown> = { type: 'number' };
  if (range.exclusiveMin === true) schema.exclusiveMinimum = range.min;
  else schema.minimum = range.min;
  schema.maximum = range.max;
  const rules = [IsUsdAmount(range, withMessage(options)), ...extra];
  return field(options, schema as ApiPropertyOptions, rules);
}

/** One of a fixed list of strings. */
export function EnumField<T extends string>(values: readonly T[], options: FieldOptions & { default?: T } = {}): PropertyDecorator {
  const schema: Record<string, unknown> = { enum: [...values] };
  if (options.default !== undefined) schema.default = options.default;
  return field(options, schema as ApiPropertyOptions, [IsIn(values, withMessage(options))]);
}

/** true or false. */
export function BooleanField(options: FieldOptions = {}): PropertyDecorator {
  return field(options, { type: 'boolean' }, [IsBoolean(withMessage(options, '$property must be true or false'))]);
}

/** An RFC 3339 timestamp in the future (e.g. an expiry). */
export function FutureTimestampField(options: FieldOptions = {}): PropertyDecorator {
  return field(options, { type: 'string', format: 'date-time' }, [IsFutureTimestamp(withMessage(options))]);
}

/** Any RFC 3339 timestamp with an offset (a bound of a time range). */
export function TimestampField(options: FieldOptions = {}): PropertyDecorator {
  return field(options, { type: 'string', format: 'date-time' }, [IsTimestamp(withMessage(options))]);
}

/** A calendar date YYYY-MM-DD that exists. */
export function CalendarDateField(options: FieldOptions = {}): PropertyDecorator {
  return field(options, { type: 'string', format: 'date' }, [IsCalendarDate(withMessage(options))]);
}

/** The pattern of an id of `kind`, as @svc/ids makes them. */
export function idPattern(kind: IdKind): RegExp {
  return new RegExp(idPatternSource(kind));
}

/** An id of one kind (`acct_...`, `key_...`), by the one pattern of @svc/ids. */
export function IdField(kind: IdKind, options: FieldOptions & { message: string }): PropertyDecorator {
  const pattern = idPattern(kind);
  return field(options, { type: 'string', pattern: pattern.source }, [Matches(pattern, { message: options.message })]);
}

/** An http(s) URL of at most `max` characters. */
export function UrlField(max: number, options: FieldOptions & { message: string }): PropertyDecorator {
  return field(options, { type: 'string', format: 'uri', maxLength: max }, [
    IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: options.message }),
    MaxLength(max, { message: options.message }),
  ]);
}

/** A list of distinct values, each one of a fixed list (at least `min`, at most every value once). */
export function EnumListField<T extends string>(values: readonly T[], options: FieldOptions & { min?: number } = {}): PropertyDecorator {
  const min = options.min ?? 1;
  const schema = { type: 'array', items: { type: 'string', enum: [...values] }, minItems: min, maxItems: values.length, uniqueItems: true };
  return field(options, schema as ApiPropertyOptions, [
    IsArray(withMessage(options)),
    ArrayMinSize(min, withMessage(options)),
    ArrayMaxSize(values.length, withMessage(options)),
    ArrayUnique(withMessage(options)),
    IsIn(values, { each: true, ...withMessage(options) }),
  ]);
}

/**
 * A list of distinct strings (`bounds` entries, each at most `itemMax` characters) that each
 * pass `item`; `what` names an entry in the message ("an IPv4 or IPv6 CIDR").
 */
export function StringListField(
  bounds: { min: number; max: number },
  itemMax: number,
  item: (value: string) => boolean,
  what: string,
  options: FieldOptions & { itemDescription?: string } = {},
): PropertyDecorator {
  const items: Record<string, unknown> = { type: 'string', maxLength: itemMax };
  if (options.itemDescription !== undefined) items.description = options.itemDescription;
  const schema = { type: 'array', minItems: bounds.min, maxItems: bounds.max, uniqueItems: true, items };
  return field(options, schema as unknown as ApiPropertyOptions, [IsStringList(bounds, itemMax, item, what, withMessage(options))]);
}
