-- What a settled request was (docs/decisions/0058): a search (POST /v1/search, web_search) or
-- an extract (POST /v1/extract, web_fetch). Rows written before the column are searches: the
-- default says so for settlements and usage events; a charge entry (search_charge, byok_fee)
-- with NULL was written before and is a search's. NULL on every other kind of entry.
ALTER TABLE "settlements" ADD COLUMN "request_kind" TEXT NOT NULL DEFAULT 'search';
ALTER TABLE "usage_events" ADD COLUMN "request_kind" TEXT NOT NULL DEFAULT 'search';
ALTER TABLE "ledger_entries" ADD COLUMN "request_kind" TEXT;
