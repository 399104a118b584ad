-- A usage event is one attempt of one search: (request_id, attempt_index) names it, and the
-- ledger drain already kept that pair unique. The random id beside it was read by nothing,
-- and it cost every attempt written a generated id and one more index insertion.
-- The unique index becomes the primary key as it is (no rebuild); the id column goes.

-- AlterTable
ALTER TABLE "usage_events" DROP CONSTRAINT "usage_events_pkey";

-- AlterTable
ALTER TABLE "usage_events" DROP COLUMN "id";

-- AlterTable
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_pkey" PRIMARY KEY USING INDEX "usage_events_request_id_attempt_index_key";
