-- usage_events is read only through settlements (GET /v1/usage selects a period's searches
-- by account and settled_at there, then joins their attempts on request_id) and in whole
-- (finance). Its two per-account indexes served no query; each cost every attempt written
-- by the ledger drain two index insertions.

-- DropIndex
DROP INDEX "usage_events_account_id_settled_at_idx";

-- DropIndex
DROP INDEX "usage_events_account_id_key_id_settled_at_idx";
