import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { ScryptOptions } from 'node:crypto';
import { Injectable } from '@nestjs/common';

const PARAMS = { N: 16_384, r: 8, p: 1 } as const;
const KEY_LENGTH = 64;

function scryptAsync(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keyLength, options, (error, key) => (error === null ? resolve(key) : reject(error)));
  });
}

/**
 * Passwords with node:crypto scrypt: `scrypt$N$r$p$<salt b64>$<hash b64>` with a random
 * 16-byte salt, compared in constant time.
 */
@Injectable()
export class PasswordAdapter {
  /** Verified against when the email is unknown, so that case costs the same scrypt work. */
  private readonly decoy: Promise<string> = this.hash(randomBytes(16).toString('base64'));

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await scryptAsync(password, salt, KEY_LENGTH, PARAMS);
    return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const parts = stored.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
    const [, n, r, p, saltText, hashText] = parts as [string, string, string, string, string, string];
    const expected = Buffer.from(hashText, 'base64');
    const key = await scryptAsync(password, Buffer.from(saltText, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
    return key.length === expected.length && timingSafeEqual(key, expected);
  }

  /** Burns the same work as verify() for a login whose email matched nobody. */
  async verifyDecoy(password: string): Promise<false> {
    await this.verify(password, await this.decoy);
    return false;
  }
}
