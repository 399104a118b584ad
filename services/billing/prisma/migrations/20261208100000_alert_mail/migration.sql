-- Alerts by email (docs/decisions/0054): each alert event is handed to account-admin's mail
-- queue once, after it committed (the events table is the outbox). Events from before this
-- migration count as handed over: nobody is mailed about an old crossing.
-- AlterTable
ALTER TABLE "events" ADD COLUMN "mail_queued_at" TIMESTAMPTZ(3);
UPDATE "events" SET "mail_queued_at" = "created_at";
-- The worker's read: alerts not handed over yet, oldest first.
CREATE INDEX "events_mail_unqueued_idx" ON "events"("created_at")
  WHERE "mail_queued_at" IS NULL AND "type" IN ('balance.low', 'key.limit.threshold', 'auto_topup.failed', 'auto_topup.succeeded');
