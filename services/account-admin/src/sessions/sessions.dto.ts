import { LIMITS } from '@svc/contracts';
import { StringField, TextField } from '@svc/http-edge';

export const PASSWORD_MIN = LIMITS.password.min;
/** Bounds the scrypt input; far above any real password. */
export const PASSWORD_MAX = LIMITS.password.max;

export interface Credentials {
  email: string;
  password: string;
}

/** POST /dashboard/api/signup. */
export class SignupDto {
  @StringField({ max: LIMITS.email.max, format: 'email', email: true, message: 'email must be an email address', order: ['email', 'max', 'type'] })
  email!: string;

  @TextField(LIMITS.password, { message: `password must be ${LIMITS.password.min} to ${LIMITS.password.max} characters` })
  password!: string;
}

/** POST /dashboard/api/signup/confirm: the token of the link mailed to the address. */
export class ConfirmSignupDto {
  @StringField({ ...LIMITS.linkToken, message: 'token must be the token of the link, a string of at most 128 characters' })
  token!: string;
}

/** POST /dashboard/api/password-reset: the address to mail a reset link to (the answer is the same whoever uses it). */
export class PasswordResetRequestDto {
  @StringField({ max: LIMITS.email.max, format: 'email', email: true, message: 'email must be an email address', order: ['email', 'max', 'type'] })
  email!: string;
}

/** POST /dashboard/api/password-reset/confirm: the link's token and the new password. */
export class PasswordResetDto {
  @StringField({ ...LIMITS.linkToken, message: 'token must be the token of the link, a string of at most 128 characters' })
  token!: string;

  @TextField(LIMITS.password, { message: `password must be ${LIMITS.password.min} to ${LIMITS.password.max} characters` })
  password!: string;
}

/** POST /dashboard/api/login: any string pair; a wrong one is the service's answer. */
export class LoginDto {
  @StringField({ max: LIMITS.email.max, typeMessage: 'email must be a string', tooLongMessage: 'email or password is wrong', order: ['max', 'type'] })
  email!: string;

  @StringField({ min: 1, max: LIMITS.password.max, typeMessage: 'password must be a string', tooShortMessage: 'password must be a string', tooLongMessage: 'email or password is wrong', order: ['max', 'min', 'type'] })
  password!: string;
}

export function credentials(body: SignupDto | LoginDto): Credentials {
  return { email: normalEmail(body.email), password: body.password };
}

/** An address as it is stored and looked up: trimmed, lower case. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}
