-- CreateTable
CREATE TABLE "provider_keys" (
    "account_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "kek_id" TEXT NOT NULL,
    "wrapped_key" TEXT NOT NULL,
    "ciphertext" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "provider_keys_pkey" PRIMARY KEY ("account_id","provider")
);

-- CreateIndex
CREATE INDEX "provider_keys_kek_id_idx" ON "provider_keys"("kek_id");

-- AddForeignKey
ALTER TABLE "provider_keys" ADD CONSTRAINT "provider_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
