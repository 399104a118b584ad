import { AppError } from '@svc/errors';
import { parseName } from '../keys/keys.dto';
import { has, rejectUnknownFields } from '../http/json-body';

export const PASSWORD_MIN = 12;
/** Bounds the scrypt input; far above any real password. */
export const PASSWORD_MAX = 1_024;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface Credentials {
  email: string;
  password: string;
}

function parseEmail(value: unknown): string {
  if (typeof value !== 'string' || value.length > 254 || !EMAIL.test(value.trim())) {
    throw new AppError('invalid_request', 'email must be an email address');
  }
  return value.trim().toLowerCase();
}

export function parseSignup(body: Record<string, unknown>): Credentials {
  rejectUnknownFields(body, ['email', 'password']);
  const email = parseEmail(body.email);
  const password = body.password;
  if (typeof password !== 'string') throw new AppError('invalid_request', 'password must be a string');
  const length = [...password].length;
  if (length < PASSWORD_MIN) throw new AppError('invalid_request', `password must be at least ${PASSWORD_MIN} characters`);
  if (length > PASSWORD_MAX) throw new AppError('invalid_request', `password must be at most ${PASSWORD_MAX} characters`);
  return { email, password };
}

export function parseLogin(body: Record<string, unknown>): Credentials {
  rejectUnknownFields(body, ['email', 'password']);
  if (typeof body.email !== 'string') throw new AppError('invalid_request', 'email must be a string');
  if (typeof body.password !== 'string' || body.password.length === 0) throw new AppError('invalid_request', 'password must be a string');
  if (body.password.length > PASSWORD_MAX) throw new AppError('invalid_request', 'email or password is wrong');
  return { email: body.email.trim().toLowerCase(), password: body.password };
}

export function parseManagementKeyCreate(body: Record<string, unknown>): { name: string } {
  rejectUnknownFields(body, ['name']);
  return { name: has(body, 'name') ? parseName(body.name) : '' };
}
