import { plainToInstance } from 'class-transformer';
import { IsString, Length, Matches, validateSync } from 'class-validator';
import type { ValidationError } from 'class-validator';
import { AppError } from '@svc/errors';

/** Longest provider key accepted (the three providers' keys are well under 100 characters). */
export const PROVIDER_KEY_MAX_LENGTH = 512;

/** PUT /v1/provider-keys/{provider} and its dashboard mirror: `{"key": string}`, nothing else. */
export class PutProviderKeyDto {
  // class-validator runs these bottom-up (with stopAtFirstError the lowest failing one speaks).
  // Printable ASCII without spaces: a key pasted with a newline or a space would be stored wrong.
  @Matches(/^[\x21-\x7e]+$/, { message: 'key must be printable ASCII without spaces' })
  @Length(1, PROVIDER_KEY_MAX_LENGTH, { message: `key must be 1 to ${PROVIDER_KEY_MAX_LENGTH} characters` })
  @IsString({ message: 'key must be a string' })
  key!: string;
}

function firstProblem(errors: readonly ValidationError[]): string {
  for (const error of errors) {
    if (error.constraints?.whitelistValidation !== undefined) return `unknown field "${error.property}"`;
    const message = Object.values(error.constraints ?? {})[0];
    if (message !== undefined) return message;
    const nested = firstProblem(error.children ?? []);
    if (nested !== '') return nested;
  }
  return '';
}

/**
 * Validates an already parsed JSON object against a DTO class with class-validator
 * (whitelist + forbidNonWhitelisted): the first problem is a 400 invalid_request naming the
 * field. The message never carries the value (a provider key must not reach an error).
 */
export function validateDto<T extends object>(cls: new () => T, body: Record<string, unknown>): T {
  const instance = plainToInstance(cls, body);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true });
  if (errors.length > 0) throw new AppError('invalid_request', firstProblem(errors) || 'invalid request body');
  return instance;
}
