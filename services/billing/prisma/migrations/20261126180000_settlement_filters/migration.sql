-- The filters a search was made with (docs/decisions/0022), in canonical form, for the
-- dashboard's activity: NULL for a search without filters and on rows written before them.
ALTER TABLE "settlements" ADD COLUMN "filters" JSONB;
