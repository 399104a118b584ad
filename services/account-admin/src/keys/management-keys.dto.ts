import { LIMITS } from '@svc/contracts';
import { BooleanField, TextField } from '@svc/http-edge';

/** POST /dashboard/api/management-keys: `{"name"?}`. */
export class ManagementKeyCreateDto {
  @TextField(LIMITS.keyName, { presence: 'optional', description: 'Defaults to "".' })
  name?: string;
}

/** PATCH /dashboard/api/management-keys/{id}: rename, disable or enable a management key (neither field may be null). */
export class ManagementKeyUpdateDto {
  @TextField(LIMITS.keyName, { presence: 'optional', description: 'The new name; not null.' })
  name?: string;

  @BooleanField({ presence: 'optional', description: 'true: the key gets 401 key_disabled until enabled again. Not null.' })
  disabled?: boolean;
}
