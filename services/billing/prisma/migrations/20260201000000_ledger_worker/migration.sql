-- The ledger worker: settlements (one per search, the exactly-once gate), usage_events (one per
-- attempt), and the outbox column that applies grants and purchases to the spendable balance.

-- AlterTable
ALTER TABLE "ledger_entries" ADD COLUMN     "applied_to_spendable_at" TIMESTAMPTZ(6);

-- CreateTable
CREATE TABLE "settlements" (
    "request_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "charged_micros" BIGINT NOT NULL,
    "attempt_count" INTEGER NOT NULL,
    "settled_at" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "settlements_pkey" PRIMARY KEY ("request_id")
);

-- CreateTable
CREATE TABLE "usage_events" (
    "id" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,
    "attempt_index" INTEGER NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "reserved_micros" BIGINT NOT NULL,
    "charged_micros" BIGINT NOT NULL,
    "timed_out" BOOLEAN NOT NULL,
    "results" INTEGER NOT NULL,
    "settled_at" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "settlements_account_id_settled_at_idx" ON "settlements"("account_id", "settled_at");

-- CreateIndex
CREATE INDEX "usage_events_account_id_settled_at_idx" ON "usage_events"("account_id", "settled_at");

-- CreateIndex
CREATE INDEX "usage_events_account_id_key_id_settled_at_idx" ON "usage_events"("account_id", "key_id", "settled_at");

-- CreateIndex
CREATE UNIQUE INDEX "usage_events_request_id_attempt_index_key" ON "usage_events"("request_id", "attempt_index");

-- CreateIndex
CREATE INDEX "ledger_entries_applied_to_spendable_at_idx" ON "ledger_entries"("applied_to_spendable_at");
