import { AppError } from '@svc/errors';
import { IsBoolean, IsOptional, IsString, validateSync } from 'class-validator';
import { parseName } from '../keys/keys.dto';
import { rejectUnknownFields } from '../http/json-body';

/** PATCH /dashboard/api/management-keys/{id}: rename, disable or enable a management key. */
export class ManagementKeyUpdateDto {
  @IsOptional()
  @IsString({ message: 'name must be a string' })
  name?: string;

  @IsOptional()
  @IsBoolean({ message: 'disabled must be true or false' })
  disabled?: boolean;
}

/** Unknown fields and wrong types are 400 invalid_request naming the field. */
export function parseManagementKeyUpdate(body: Record<string, unknown>): ManagementKeyUpdateDto {
  rejectUnknownFields(body, ['name', 'disabled']);
  if (body.name === null) throw new AppError('invalid_request', 'name must be a string');
  if (body.disabled === null) throw new AppError('invalid_request', 'disabled must be true or false');
  const dto = Object.assign(new ManagementKeyUpdateDto(), body);
  const problem = validateSync(dto)[0];
  if (problem !== undefined) throw new AppError('invalid_request', Object.values(problem.constraints ?? {})[0] ?? `${problem.property} is not valid`);
  if (dto.name !== undefined) parseName(dto.name);
  return dto;
}
