// Sets a dashboard user's password (and signs that user out everywhere), audited with the
// operator as the actor:
//   DATABASE_URL=... RESET_EMAIL=user@example.com RESET_PASSWORD=... node dist/sessions/reset-password-cli.js
// With RESET_CREATE=true an address no user has gets a new account and user, confirmed (no
// mail): the local stack's start command makes its demo user so. The password comes from the
// environment, never from the command line (process listings show arguments).
import { bool, parseEnv, secret, str, url } from '@svc/config';
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
    RESET_CREATE: bool({ default: false }),
  });
  const email = (env.RESET_EMAIL ?? '').trim().toLowerCase();
  const password = env.RESET_PASSWORD;
  if (email === '' || password === undefined) throw new Error('RESET_EMAIL and RESET_PASSWORD are required');
  if ([...password].length > PASSWORD_MAX) throw new Error(`RESET_PASSWORD must be at most ${PASSWORD_MAX} characters`);
  const db = new DatabaseRepository({ DATABASE_URL: env.DATABASE_URL } as AppConfig);
  try {
    const outcome = await new SessionsRepository(db).setPassword(email, await new PasswordAdapter().hash(password), env.RESET_CREATE);
    switch (outcome) {
      case 'missing':
        throw new Error('no dashboard user has this email');
      case 'created':
        process.stdout.write('no user had this email: account and user created, confirmed\n');
        break;
      case 'reset':
        process.stdout.write('password reset; every session of the user ended\n');
        break;
    }
  } finally {
    await db.onApplicationShutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin reset-password: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
