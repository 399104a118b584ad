-- CreateEnum
CREATE TYPE "ledger_entry_kind" AS ENUM ('grant', 'purchase', 'search_charge', 'search_refund', 'stripe_refund', 'dispute');

-- CreateTable
CREATE TABLE "account_balances" (
    "account_id" TEXT NOT NULL,
    "balance_micros" BIGINT NOT NULL DEFAULT 0,
    "total_purchased_micros" BIGINT NOT NULL DEFAULT 0,
    "total_granted_micros" BIGINT NOT NULL DEFAULT 0,
    "total_spent_micros" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "account_balances_pkey" PRIMARY KEY ("account_id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "kind" "ledger_entry_kind" NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "balance_after_micros" BIGINT NOT NULL,
    "reason" TEXT,
    "idempotency_key" TEXT,
    "request_id" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ledger_entries_account_id_created_at_id_idx" ON "ledger_entries"("account_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_account_id_kind_idempotency_key_key" ON "ledger_entries"("account_id", "kind", "idempotency_key");

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "account_balances"("account_id") ON DELETE RESTRICT ON UPDATE CASCADE;
