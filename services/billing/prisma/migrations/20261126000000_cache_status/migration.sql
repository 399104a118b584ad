-- The result cache's part in each attempt and search (docs/decisions/0023): NULL on rows
-- written before it (and on attempts that did not answer).
ALTER TABLE "usage_events" ADD COLUMN "cache" TEXT;
ALTER TABLE "usage_events" ADD COLUMN "saved_micros" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "ledger_entries" ADD COLUMN "cache" TEXT;
