-- Automatic top-up (docs/decisions/0028-webhooks-and-auto-top-up.md): its settings and saved
-- card on billing_settings, and one auto_topups row per top-up billing made or refused.
ALTER TABLE "billing_settings"
    ADD COLUMN "auto_topup_enabled" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "auto_topup_threshold_micros" BIGINT,
    ADD COLUMN "auto_topup_amount_micros" BIGINT,
    ADD COLUMN "auto_topup_monthly_cap_micros" BIGINT,
    ADD COLUMN "auto_topup_armed" BOOLEAN NOT NULL DEFAULT true,
    ADD COLUMN "auto_topup_consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "auto_topup_disabled_reason" TEXT,
    ADD COLUMN "stripe_customer_id" TEXT,
    ADD COLUMN "payment_method_id" TEXT,
    ADD COLUMN "payment_method_brand" TEXT,
    ADD COLUMN "payment_method_last4" TEXT,
    ADD COLUMN "payment_method_saved_at" TIMESTAMPTZ(6);
-- The evaluation's scan: accounts with automatic top-up on.
CREATE INDEX "billing_settings_auto_topup_idx" ON "billing_settings"("account_id") WHERE "auto_topup_enabled";

CREATE TABLE "auto_topups" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "month" TEXT NOT NULL,
    "payment_intent_id" TEXT,
    "failure_code" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(6),
    "ledger_entry_id" TEXT,
    "refunded_micros" BIGINT NOT NULL DEFAULT 0,
    "disputed_micros" BIGINT NOT NULL DEFAULT 0,
    "settled_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "auto_topups_pkey" PRIMARY KEY ("id")
);
-- The status and the amount are checked by a trigger rather than CHECK constraints: Prisma's
-- schema engine (the migration check, packages/prisma-schema-check) cannot diff a table that has one.
CREATE FUNCTION "auto_topups_check"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."status" NOT IN ('pending', 'succeeded', 'failed', 'skipped') THEN
        RAISE EXCEPTION 'auto_topups.status must be pending, succeeded, failed or skipped, not %', NEW."status" USING ERRCODE = 'check_violation';
    END IF;
    IF NEW."amount_micros" <= 0 THEN
        RAISE EXCEPTION 'auto_topups.amount_micros must be positive' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER "auto_topups_check" BEFORE INSERT OR UPDATE ON "auto_topups" FOR EACH ROW EXECUTE FUNCTION "auto_topups_check"();
CREATE UNIQUE INDEX "auto_topups_payment_intent_id_key" ON "auto_topups"("payment_intent_id");
CREATE INDEX "auto_topups_account_id_month_idx" ON "auto_topups"("account_id", "month");
CREATE INDEX "auto_topups_account_id_created_at_id_idx" ON "auto_topups"("account_id", "created_at", "id");
-- At most one top-up in flight per account, whatever the code does.
CREATE UNIQUE INDEX "auto_topups_one_pending_idx" ON "auto_topups"("account_id") WHERE "status" = 'pending';
