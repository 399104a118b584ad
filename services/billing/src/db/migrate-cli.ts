import { loadEnvOrExit, url } from '@svc/config';
import { migrateBillingDatabase } from './migrate';

/** `npm run migrate -w @svc/billing`: applies the migrations to DATABASE_URL and exits. */
async function main(): Promise<void> {
  const env = loadEnvOrExit(
    { DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_billing', protocols: ['postgresql', 'postgres'] }) },
    'billing-migrate',
  );
  const result = await migrateBillingDatabase(env.DATABASE_URL);
  process.stdout.write(`${JSON.stringify({ applied: result.applied, already_applied: result.alreadyApplied })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`billing-migrate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
