-- Key limits without re-reading settlements (docs/decisions/0035-key-spend-by-day.md):
-- key_spend_days holds each key's charges per UTC day, key_limit_checks the keys whose
-- limit is to be checked (a key that settled since its last check). A statement trigger on
-- settlements keeps both in the drain's own transaction, from the rows that transaction
-- inserted (a redelivered record inserts nothing, so it adds nothing), whatever writes them.
CREATE TABLE "key_spend_days" (
    "key_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "account_id" TEXT NOT NULL,
    "spent_micros" BIGINT NOT NULL,

    CONSTRAINT "key_spend_days_pkey" PRIMARY KEY ("key_id", "day")
);
-- Recovery (hydration) reads an account's keys' days.
CREATE INDEX "key_spend_days_account_id_idx" ON "key_spend_days"("account_id");

CREATE TABLE "key_limit_checks" (
    "key_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    -- Moves on every insert for the key: a check deletes the row only at the version it read,
    -- so spend that landed during the check is checked again.
    "version" BIGINT NOT NULL DEFAULT 1,

    CONSTRAINT "key_limit_checks_pkey" PRIMARY KEY ("key_id")
);

CREATE FUNCTION "settlements_key_spend"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "key_spend_days" ("key_id", "day", "account_id", "spent_micros")
        SELECT "key_id", ("settled_at" AT TIME ZONE 'UTC')::date, min("account_id"), sum("charged_micros")
        FROM fresh GROUP BY 1, 2
        ON CONFLICT ("key_id", "day") DO UPDATE SET "spent_micros" = "key_spend_days"."spent_micros" + EXCLUDED."spent_micros";
    INSERT INTO "key_limit_checks" ("key_id", "account_id")
        SELECT "key_id", min("account_id") FROM fresh GROUP BY 1
        ON CONFLICT ("key_id") DO UPDATE SET "version" = "key_limit_checks"."version" + 1;
    RETURN NULL;
END;
$$;
-- Created before the backfill: CREATE TRIGGER holds a SHARE ROW EXCLUSIVE lock on settlements
-- until this migration's transaction commits, so no insert falls between the two (the file
-- must run as one transaction, as billing's migrate command runs it).
CREATE TRIGGER "settlements_key_spend" AFTER INSERT ON "settlements" REFERENCING NEW TABLE AS fresh
    FOR EACH STATEMENT EXECUTE FUNCTION "settlements_key_spend"();

INSERT INTO "key_spend_days" ("key_id", "day", "account_id", "spent_micros")
    SELECT "key_id", ("settled_at" AT TIME ZONE 'UTC')::date, min("account_id"), sum("charged_micros")
    FROM "settlements" GROUP BY 1, 2;
-- What the previous scan would still have looked at (its first look-back, 10 minutes).
INSERT INTO "key_limit_checks" ("key_id", "account_id")
    SELECT "key_id", min("account_id") FROM "settlements" WHERE "created_at" > now() - interval '10 minutes' GROUP BY 1;
-- Only the old scan read settlements by created_at: its BRIN index goes (the column stays).
DROP INDEX "settlements_created_at_brin";
