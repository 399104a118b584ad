import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { LIMITS, RESEARCH_STATUSES } from '@svc/contracts';
import { EnumField, PageQueryDto, StringField, UsdField } from '@svc/http-edge';
import { IsArray, IsString, registerDecorator, ValidateIf } from 'class-validator';
import type { ValidationArguments } from 'class-validator';

/** Validates the field only when the body has it (null is checked, and refused). */
const IfPresent = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** A UTF-16 surrogate standing alone: no UTF-8 text (nor PostgreSQL's jsonb) can hold it. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The path of the first string (or key) of `value` with a lone surrogate, or null. */
export function loneSurrogatePath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogatePath(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (LONE_SURROGATE.test(key)) return path;
      const found = loneSurrogatePath(inner, `${path}.${key}`);
      if (found !== null) return found;
    }
  }
  return null;
}

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (typeof value === 'object' && value !== null) return 1 + Math.max(0, ...Object.values(value as Record<string, unknown>).map(depthOf));
  return 0;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A field checked by one function that answers the problem (null: fine), with its OpenAPI property. */
function CheckedField(name: string, schema: Record<string, unknown>, problem: (value: unknown) => string | null, required: boolean): PropertyDecorator {
  const rule: PropertyDecorator = (target, property) => {
    registerDecorator({
      name, target: target.constructor, propertyName: String(property),
      options: { message: (args: ValidationArguments) => `${args.property} ${problem(args.value) ?? 'is not valid'}` },
      validator: { validate: (value: unknown) => problem(value) === null },
    });
  };
  return applyDecorators(ApiProperty({ ...schema, required } as never), ...(required ? [] : [IfPresent()]), rule);
}

const OUTPUT_SCHEMA = LIMITS.researchOutputSchema;
const METADATA = LIMITS.researchMetadata;

function outputSchemaProblem(value: unknown): string | null {
  if (!isPlainObject(value)) return 'must be a JSON Schema object';
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > OUTPUT_SCHEMA.maxBytes) return `must be at most ${OUTPUT_SCHEMA.maxBytes} bytes as JSON`;
  if (depthOf(value) > OUTPUT_SCHEMA.maxDepth) return `must be nested at most ${OUTPUT_SCHEMA.maxDepth} deep`;
  if (loneSurrogatePath(value, '') !== null) return 'must not hold a lone UTF-16 surrogate';
  return null;
}

function metadataProblem(value: unknown): string | null {
  if (!isPlainObject(value)) return 'must be an object of strings';
  const entries = Object.entries(value);
  if (entries.length > METADATA.maxKeys) return `must have at most ${METADATA.maxKeys} keys`;
  for (const [key, inner] of entries) {
    if (!/^[A-Za-z0-9_.-]+$/.test(key) || key.length > METADATA.keyMax) return `keys must be 1 to ${METADATA.keyMax} characters of A-Z, a-z, 0-9, _ . -`;
    if (typeof inner !== 'string' || [...inner].length > METADATA.valueMax) return `values must be strings of at most ${METADATA.valueMax} characters`;
    if (LONE_SURROGATE.test(inner)) return 'must not hold a lone UTF-16 surrogate';
  }
  return null;
}

/** POST /v1/research (docs/api.md, "Research runs"). Which ids are research models is checked by the service (unknown_model). */
export class CreateResearchDto {
  @CheckedField('researchInput', { type: 'string', minLength: LIMITS.researchInput.min, maxLength: LIMITS.researchInput.max, description: 'The question or task, 1 to 8,000 characters after trimming.' }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    const trimmed = value.trim();
    if (trimmed === '') return 'must not be blank';
    if ([...trimmed].length > LIMITS.researchInput.max) return `must be at most ${LIMITS.researchInput.max} characters`;
    if (LONE_SURROGATE.test(trimmed)) return 'must not hold a lone UTF-16 surrogate';
    return null;
  }, true)
  input!: string;

  @StringField({ presence: 'optional', max: 64, message: 'model must be a research model id (GET /v1/models, kind research)', description: 'One research model.' })
  model?: string;

  @ApiProperty({ required: false, type: 'array', items: { type: 'string' }, minItems: LIMITS.researchModels.min, maxItems: LIMITS.researchModels.max, description: 'Research models in fallback order (after `model` when both are given).' } as never)
  @IfPresent()
  @IsArray({ message: `models must be an array of ${LIMITS.researchModels.min} to ${LIMITS.researchModels.max} research model ids` })
  @IsString({ each: true, message: 'models must hold research model ids' })
  models?: string[];

  @UsdField({ min: 0, max: LIMITS.maxCostUsd.max, exclusiveMin: true }, { missingMessage: 'max_cost_usd is required', description: 'The hard cap: the most the run may cost, in USD.' })
  max_cost_usd!: number;

  @CheckedField('researchOutputSchema', { type: 'object', additionalProperties: true, description: `A JSON Schema for structured output (at most ${OUTPUT_SCHEMA.maxBytes} bytes, nested at most ${OUTPUT_SCHEMA.maxDepth} deep).` }, outputSchemaProblem, false)
  output_schema?: Record<string, unknown>;

  @CheckedField('researchMetadata', { type: 'object', additionalProperties: { type: 'string', maxLength: METADATA.valueMax }, maxProperties: METADATA.maxKeys, description: 'Your own labels, returned with the run.' }, metadataProblem, false)
  metadata?: Record<string, string>;
}

/** GET /v1/research: `limit`, `cursor` and an optional `status`. */
export class ResearchListQueryDto extends PageQueryDto {
  @EnumField(RESEARCH_STATUSES, { presence: 'optional', message: `status must be one of ${RESEARCH_STATUSES.join(', ')}`, description: 'Only runs in this status.' })
  status?: string;
}
