// Deletes audit entries older than AUDIT_RETENTION_DAYS from DATABASE_URL (the retention
// purge; docs/operations.md, "Audit log retention"): `npm run audit:purge -w @svc/account-admin`.
import { runAuditPurgeCli } from '@svc/pg-migrate';

runAuditPurgeCli('account-admin', 'postgresql://postgres@127.0.0.1:5432/svc_account_admin');
