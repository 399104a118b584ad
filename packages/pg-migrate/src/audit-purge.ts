import { LIMITS } from '@svc/contracts';
import { int, parseEnv, url } from '@svc/config';
import { Client } from 'pg';

/**
 * The audit log's retention purge (docs/operations.md, "Audit log retention"): the one path
 * that may delete audit entries. In one transaction it sets `svc.audit_purge_days` (local to
 * the transaction) and deletes the entries older than that many days; the append-only
 * trigger lets exactly those rows go and refuses every other UPDATE or DELETE. Run it as the
 * role that owns the tables (the migrations' role), from an operator's shell or a cron job.
 */
export async function purgeAuditEntries(databaseUrl: string, retentionDays: number): Promise<{ deleted: number; retentionDays: number }> {
  if (!Number.isSafeInteger(retentionDays) || retentionDays < 1) throw new Error('the retention must be a whole number of days, at least 1');
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query("SELECT set_config('svc.audit_purge_days', $1, true)", [String(retentionDays)]);
      const result = await client.query('DELETE FROM audit_entries WHERE at < now() - make_interval(days => $1::integer)', [retentionDays]);
      await client.query('COMMIT');
      return { deleted: result.rowCount ?? 0, retentionDays };
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  } finally {
    await client.end();
  }
}

/**
 * A service's `audit:purge` command: reads DATABASE_URL (default `defaultDatabaseUrl`) and
 * AUDIT_RETENTION_DAYS, purges, and prints the result as one JSON line; a failure is one line
 * on stderr, named by `service`, and exit code 1.
 */
export function runAuditPurgeCli(service: string, defaultDatabaseUrl: string): void {
  const purge = async (): Promise<void> => {
    const env = parseEnv({
      DATABASE_URL: url({ default: defaultDatabaseUrl, protocols: ['postgresql', 'postgres'] }),
      AUDIT_RETENTION_DAYS: int({ default: LIMITS.auditRetentionDays.default, min: LIMITS.auditRetentionDays.min, max: LIMITS.auditRetentionDays.max }),
    });
    const result = await purgeAuditEntries(env.DATABASE_URL, env.AUDIT_RETENTION_DAYS);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  };
  purge().catch((error: unknown) => {
    process.stderr.write(`${service} audit purge: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
