-- Stripe Checkout: checkout sessions, the purchase grant gate (one per paid session) and
-- the handled Stripe events (dedupe on the event id).

-- CreateTable
CREATE TABLE "checkout_sessions" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "stripe_session_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "credit_micros" BIGINT NOT NULL,
    "payment_intent_id" TEXT,
    "expires_at" TIMESTAMPTZ(6),
    "paid_at" TIMESTAMPTZ(6),
    "closed_at" TIMESTAMPTZ(6),
    "refunded_micros" BIGINT NOT NULL DEFAULT 0,
    "disputed_micros" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkout_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "purchase_grants" (
    "stripe_session_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "ledger_entry_id" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "event_id" TEXT NOT NULL,
    "granted_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "purchase_grants_pkey" PRIMARY KEY ("stripe_session_id")
);

-- CreateTable
CREATE TABLE "stripe_events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stripe_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "checkout_sessions_stripe_session_id_key" ON "checkout_sessions"("stripe_session_id");

-- CreateIndex
CREATE UNIQUE INDEX "checkout_sessions_payment_intent_id_key" ON "checkout_sessions"("payment_intent_id");

-- CreateIndex
CREATE INDEX "checkout_sessions_account_id_created_at_idx" ON "checkout_sessions"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "checkout_sessions_status_paid_at_idx" ON "checkout_sessions"("status", "paid_at");

-- CreateIndex
CREATE UNIQUE INDEX "purchase_grants_ledger_entry_id_key" ON "purchase_grants"("ledger_entry_id");
