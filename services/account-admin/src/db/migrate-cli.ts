// Applies account-admin's migrations to DATABASE_URL: `npm run migrate -w services/account-admin`.
import { parseEnv, url } from '@svc/config';
import { migrate } from './migrate';

async function main(): Promise<void> {
  const env = parseEnv({
    DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_account_admin', protocols: ['postgresql', 'postgres'] }),
  });
  const result = await migrate(env.DATABASE_URL);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin migrate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
