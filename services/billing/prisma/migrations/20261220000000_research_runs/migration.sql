-- Research runs (docs/decisions/0062): a cap held at creation as a ledger entry, released at the
-- end less the metered cost. Both entries are keyed by the run id (idempotency_key), so each is
-- written once.
ALTER TYPE "ledger_entry_kind" ADD VALUE 'research_hold';
ALTER TYPE "ledger_entry_kind" ADD VALUE 'research_release';

CREATE TABLE "research_runs" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "input" TEXT NOT NULL,
    "models" TEXT[] NOT NULL,
    "output_schema" JSONB,
    "metadata" JSONB,
    "max_cost_micros" BIGINT NOT NULL,
    "held_micros" BIGINT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" JSONB NOT NULL,
    "current_attempt" INTEGER,
    "output" JSONB,
    "sources" JSONB,
    "cost_micros" BIGINT,
    "provider_cost_micros" BIGINT,
    "error" TEXT,
    "idempotency_key" TEXT,
    "request_digest" TEXT,
    "cancel_requested_at" TIMESTAMPTZ(6),
    "started_at" TIMESTAMPTZ(6),
    "completed_at" TIMESTAMPTZ(6),
    "settled_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "research_runs_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "research_runs_account_id_created_at_id_idx" ON "research_runs"("account_id", "created_at", "id");
CREATE UNIQUE INDEX "research_runs_account_id_key_id_idempotency_key_key" ON "research_runs"("account_id", "key_id", "idempotency_key");
-- The runs the research worker still has to finish (its sweep reads them): few at any time.
CREATE INDEX "research_runs_open_idx" ON "research_runs"("created_at") WHERE "settled_at" IS NULL;
