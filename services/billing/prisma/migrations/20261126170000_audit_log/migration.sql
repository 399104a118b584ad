-- CreateEnum
CREATE TYPE "audit_actor_kind" AS ENUM ('management_key', 'session', 'oauth_grant', 'operator');

-- CreateTable
CREATE TABLE "audit_entries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_kind" "audit_actor_kind" NOT NULL,
    "actor_id" TEXT NOT NULL,
    "client_address" TEXT,
    "action" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "changes" JSONB NOT NULL,

    CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_entries_account_id_at_id_idx" ON "audit_entries"("account_id", "at" DESC, "id" DESC);

-- The audit log is append-only (docs/api.md, "Audit log"; docs/operations.md, "Audit log
-- retention"). Every UPDATE and TRUNCATE is refused, and so is every DELETE, except the
-- retention purge's: in its own transaction it sets `svc.audit_purge_days` (SET LOCAL) to
-- AUDIT_RETENTION_DAYS, and only rows older than that many days (never fewer than 1) go.
CREATE FUNCTION "audit_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    days integer;
BEGIN
    IF TG_OP = 'DELETE' THEN
        BEGIN
            days := NULLIF(current_setting('svc.audit_purge_days', true), '')::integer;
        EXCEPTION WHEN others THEN
            days := NULL;
        END;
        IF days IS NOT NULL AND days >= 1 AND OLD."at" < now() - make_interval(days => days) THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION 'audit_entries is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER "audit_entries_append_only" BEFORE UPDATE OR DELETE ON "audit_entries"
    FOR EACH ROW EXECUTE FUNCTION "audit_entries_append_only"();
CREATE TRIGGER "audit_entries_no_truncate" BEFORE TRUNCATE ON "audit_entries"
    FOR EACH STATEMENT EXECUTE FUNCTION "audit_entries_append_only"();
