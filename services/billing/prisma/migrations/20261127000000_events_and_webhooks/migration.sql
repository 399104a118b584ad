-- Events, outgoing webhooks and billing settings (docs/decisions/0028-webhooks-and-auto-top-up.md).
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "events_account_id_created_at_id_idx" ON "events"("account_id", "created_at", "id");

CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(6),
    "failing_since" TIMESTAMPTZ(6),
    "disabled_reason" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_endpoints_account_id_created_at_id_idx" ON "webhook_endpoints"("account_id", "created_at", "id");

CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "generation" INTEGER NOT NULL DEFAULT 0,
    "queued_at" TIMESTAMPTZ(6),
    "first_attempt_at" TIMESTAMPTZ(6),
    "last_attempt_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "webhook_deliveries_event_id_endpoint_id_key" ON "webhook_deliveries"("event_id", "endpoint_id");
CREATE INDEX "webhook_deliveries_endpoint_id_created_at_id_idx" ON "webhook_deliveries"("endpoint_id", "created_at", "id");
-- The dispatcher's scan: deliveries no job carries yet (few at any time).
CREATE INDEX "webhook_deliveries_unqueued_idx" ON "webhook_deliveries"("created_at") WHERE "status" = 'pending' AND "queued_at" IS NULL;

CREATE TABLE "webhook_attempts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" TEXT NOT NULL,
    "attempted_at" TIMESTAMPTZ(6) NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "response_head" TEXT,
    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "webhook_attempts_delivery_id_attempted_at_idx" ON "webhook_attempts"("delivery_id", "attempted_at");

CREATE TABLE "billing_settings" (
    "account_id" TEXT NOT NULL,
    "low_balance_threshold_micros" BIGINT,
    "low_balance_armed" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "billing_settings_pkey" PRIMARY KEY ("account_id")
);
-- The threshold evaluation's scan: accounts with a threshold set.
CREATE INDEX "billing_settings_threshold_idx" ON "billing_settings"("account_id") WHERE "low_balance_threshold_micros" IS NOT NULL;

-- key.limit.threshold: one row per key, period and percentage sent (the once-per-period gate).
CREATE TABLE "key_limit_notices" (
    "key_id" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(6) NOT NULL,
    "percent" INTEGER NOT NULL,
    "account_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "key_limit_notices_pkey" PRIMARY KEY ("key_id", "period_start", "percent")
);
-- Which keys settled lately (the threshold evaluation's scan): a BRIN index, nearly free to keep
-- on an append-only table whose created_at grows with its pages.
CREATE INDEX "settlements_created_at_brin" ON "settlements" USING BRIN ("created_at");
