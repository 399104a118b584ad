// Deletes audit entries older than AUDIT_RETENTION_DAYS from DATABASE_URL (the retention
// purge; docs/operations.md, "Audit log retention"): `npm run audit:purge -w @svc/account-admin`.
import { LIMITS } from '@svc/contracts';
import { int, parseEnv, url } from '@svc/config';
import { purgeAuditEntries } from '@svc/pg-migrate';

async function main(): Promise<void> {
  const env = parseEnv({
    DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_account_admin', protocols: ['postgresql', 'postgres'] }),
    AUDIT_RETENTION_DAYS: int({ default: LIMITS.auditRetentionDays.default, min: LIMITS.auditRetentionDays.min, max: LIMITS.auditRetentionDays.max }),
  });
  const result = await purgeAuditEntries(env.DATABASE_URL, env.AUDIT_RETENTION_DAYS);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`account-admin audit purge: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
