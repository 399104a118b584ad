-- CreateTable
CREATE TABLE "key_cache_outbox" (
    "id" BIGSERIAL NOT NULL,
    "key_hash" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "key_cache_outbox_pkey" PRIMARY KEY ("id")
);
