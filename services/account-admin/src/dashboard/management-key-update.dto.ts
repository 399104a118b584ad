import { IfPresent, IsText } from '@svc/http-edge';
import { IsBoolean } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { NAME_MAX } from '../keys/keys.dto';

/** PATCH /dashboard/api/management-keys/{id}: rename, disable or enable a management key (neither field may be null). */
export class ManagementKeyUpdateDto {
  @ApiPropertyOptional({ type: 'string', minLength: 1, maxLength: NAME_MAX, description: 'The new name; not null.' })
  @IfPresent()
  @IsText(1, NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ type: 'boolean', description: 'true: the key gets 401 key_disabled until enabled again. Not null.' })
  @IfPresent()
  @IsBoolean({ message: 'disabled must be true or false' })
  disabled?: boolean;
}
