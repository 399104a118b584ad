import { IfPresent, IsText } from '@svc/http-edge';
import { IsBoolean } from 'class-validator';
import { NAME_MAX } from '../keys/keys.dto';

/** PATCH /dashboard/api/management-keys/{id}: rename, disable or enable a management key (neither field may be null). */
export class ManagementKeyUpdateDto {
  @IfPresent()
  @IsText(1, NAME_MAX)
  name?: string;

  @IfPresent()
  @IsBoolean({ message: 'disabled must be true or false' })
  disabled?: boolean;
}
