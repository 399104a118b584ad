import { IsText } from '@svc/http-edge';
import { IsBoolean, ValidateIf } from 'class-validator';
import { NAME_MAX } from '../keys/keys.dto';

/** Validate a field only when the body has it (null then fails: neither field is nullable). */
const IfPresent = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** PATCH /dashboard/api/management-keys/{id}: rename, disable or enable a management key. */
export class ManagementKeyUpdateDto {
  @IfPresent()
  @IsText(1, NAME_MAX)
  name?: string;

  @IfPresent()
  @IsBoolean({ message: 'disabled must be true or false' })
  disabled?: boolean;
}
