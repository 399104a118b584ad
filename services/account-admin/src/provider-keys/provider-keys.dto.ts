import { LIMITS } from '@svc/contracts';
import { StringField } from '@svc/http-edge';

/**
 * PUT /v1/provider-keys/{provider} and /dashboard/api/provider-keys/{provider}: `{"key": string}`,
 * nothing else (the platform's validation pipe: unknown fields and every problem are 400
 * invalid_request naming the field; messages never carry the value). Printable ASCII without
 * spaces: a key pasted with a newline or a space would be stored wrong.
 */
export class PutProviderKeyDto {
  @StringField({
    min: LIMITS.providerKey.min,
    max: LIMITS.providerKey.max,
    pattern: /^[\x21-\x7e]+$/,
    typeMessage: 'key must be a string',
    tooShortMessage: `key must be ${LIMITS.providerKey.min} to ${LIMITS.providerKey.max} characters`,
    tooLongMessage: `key must be ${LIMITS.providerKey.min} to ${LIMITS.providerKey.max} characters`,
    patternMessage: 'key must be printable ASCII without spaces',
    description: "The provider's API key: printable ASCII without spaces. Stored encrypted; never shown again.",
  })
  key!: string;
}
