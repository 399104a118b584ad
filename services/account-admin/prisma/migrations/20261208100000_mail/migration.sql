-- Outgoing mail, confirmed sign-up, password reset and the owner's alert choices
-- (docs/decisions/0054-mail-path.md, 0055-sign-up-without-enumeration.md).
-- CreateTable
CREATE TABLE "mail_messages" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "account_id" TEXT,
    "recipient" TEXT,
    "event_id" TEXT,
    "event" JSONB,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "detail" TEXT,
    "smtp_message_id" TEXT,
    "smtp_response" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "queued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sent_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "mail_messages_pkey" PRIMARY KEY ("id")
);
-- CreateTable
CREATE TABLE "signup_requests" (
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "token_hash" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "signup_requests_pkey" PRIMARY KEY ("email")
);
-- CreateTable
CREATE TABLE "password_resets" (
    "message_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "token_hash" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "password_resets_pkey" PRIMARY KEY ("message_id")
);
-- CreateTable
CREATE TABLE "notification_settings" (
    "account_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "email" BOOLEAN NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "notification_settings_pkey" PRIMARY KEY ("account_id","event_type")
);
-- CreateIndex
CREATE UNIQUE INDEX "mail_messages_event_id_key" ON "mail_messages"("event_id");
-- CreateIndex
CREATE INDEX "mail_messages_status_queued_at_idx" ON "mail_messages"("status", "queued_at");
-- CreateIndex
CREATE INDEX "mail_messages_created_at_idx" ON "mail_messages"("created_at");
-- CreateIndex
CREATE INDEX "mail_messages_account_id_created_at_idx" ON "mail_messages"("account_id", "created_at");
-- CreateIndex
CREATE UNIQUE INDEX "signup_requests_token_hash_key" ON "signup_requests"("token_hash");
-- CreateIndex
CREATE INDEX "signup_requests_expires_at_idx" ON "signup_requests"("expires_at");
-- CreateIndex
CREATE UNIQUE INDEX "password_resets_token_hash_key" ON "password_resets"("token_hash");
-- CreateIndex
CREATE INDEX "password_resets_user_id_idx" ON "password_resets"("user_id");
-- CreateIndex
CREATE INDEX "password_resets_expires_at_idx" ON "password_resets"("expires_at");
-- AddForeignKey
ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
-- AddForeignKey
ALTER TABLE "notification_settings" ADD CONSTRAINT "notification_settings_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
