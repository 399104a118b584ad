// Sets a dashboard user's password (and signs that user out everywhere):
//   DATABASE_URL=... RESET_EMAIL=user@example.com RESET_PASSWORD=... node dist/sessions/reset-password-cli.js
// The password comes from the environment, never from the command line (process listings
// show arguments). The local stack's start command uses it to reset its demo user.
import { parseEnv, secret, str, url } from '@svc/config';
import { DatabaseRepository } from '../db/database.repository';
import type { AppConfig } from '../config';
import { PASSWORD_MAX, PASSWORD_MIN } from './sessions.dto';
import { SessionsRepository } from './sessions.repository';
import { PasswordAdapter } from './password.adapter';

async function main(): Promise<void> {
  const env = parseEnv({
    DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_account_admin', protocols: ['postgresql', 'postgres'] }),
    RESET_EMAIL: str({}),
    RESET_PASSWORD: secret({ minLength: PASSWORD_MIN }),
  });
  const email = (env.RESET_EMAIL ?? '').trim().toLowerCase();
  const password = env.RESET_PASSWORD;
  if (email === '' || password === undefined) throw new Error('RESET_EMAIL and RESET_PASSWORD are required');
  if ([...password].length > PASSWORD_MAX) throw new Error(`RESET_PASSWORD must be at most ${PASSWORD_MAX} characters`);
  const db = new DatabaseRepository({ DATABASE_URL: env.DATABASE_URL } as AppConfig);
  try {
    const found = await new SessionsRepository(db).resetPassword(email, await new PasswordAdapter().hash(password));
    if (!found) throw new Error('no dashboard user has this email');
    process.stdout.write('password reset; every session of the user ended\n');
  } finally {
    await db.onApplicationShutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin reset-password: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
