import { IfPresent, IsText } from '@svc/http-edge';
import { IsEmail, IsString, MaxLength, MinLength } from 'class-validator';
import { NAME_MAX } from '../keys/keys.dto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export const PASSWORD_MIN = 12;
/** Bounds the scrypt input; far above any real password. */
export const PASSWORD_MAX = 1_024;
export const EMAIL_MAX = 254;

export interface Credentials {
  email: string;
  password: string;
}

/** POST /dashboard/api/signup. */
export class SignupDto {
  @ApiProperty({ type: 'string', format: 'email', maxLength: EMAIL_MAX })
  @IsString({ message: 'email must be an email address' })
  @MaxLength(EMAIL_MAX, { message: 'email must be an email address' })
  @IsEmail({}, { message: 'email must be an email address' })
  email!: string;

  @ApiProperty({ type: 'string', minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX })
  @IsText(PASSWORD_MIN, PASSWORD_MAX, { message: `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters` })
  password!: string;
}

/** POST /dashboard/api/login: any string pair; a wrong one is the service's answer. */
export class LoginDto {
  @ApiProperty({ type: 'string', maxLength: EMAIL_MAX })
  @IsString({ message: 'email must be a string' })
  @MaxLength(EMAIL_MAX, { message: 'email or password is wrong' })
  email!: string;

  @ApiProperty({ type: 'string', minLength: 1, maxLength: PASSWORD_MAX })
  @IsString({ message: 'password must be a string' })
  @MinLength(1, { message: 'password must be a string' })
  @MaxLength(PASSWORD_MAX, { message: 'email or password is wrong' })
  password!: string;
}

export function credentials(body: SignupDto | LoginDto): Credentials {
  return { email: body.email.trim().toLowerCase(), password: body.password };
}

/** POST /dashboard/api/management-keys: `{"name"?}`. */
export class ManagementKeyCreateDto {
  @ApiPropertyOptional({ type: 'string', minLength: 1, maxLength: NAME_MAX, description: 'Defaults to "".' })
  @IfPresent()
  @IsText(1, NAME_MAX)
  name?: string;
}
