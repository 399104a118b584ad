import { IsString, Length, Matches } from 'class-validator';

/** Longest provider key accepted (the three providers' keys are well under 100 characters). */
export const PROVIDER_KEY_MAX_LENGTH = 512;

/**
 * PUT /v1/provider-keys/{provider} and its dashboard mirror: `{"key": string}`, nothing else
 * (the platform's validation pipe: unknown fields and every problem are 400 invalid_request
 * naming the field; messages never carry the value).
 */
export class PutProviderKeyDto {
  // class-validator runs these bottom-up (with stopAtFirstError the lowest failing one speaks).
  // Printable ASCII without spaces: a key pasted with a newline or a space would be stored wrong.
  @Matches(/^[\x21-\x7e]+$/, { message: 'key must be printable ASCII without spaces' })
  @Length(1, PROVIDER_KEY_MAX_LENGTH, { message: `key must be 1 to ${PROVIDER_KEY_MAX_LENGTH} characters` })
  @IsString({ message: 'key must be a string' })
  key!: string;
}
