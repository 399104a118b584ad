-- The OAuth sweep (docs/decisions/0046): expired requests and tokens by expiry, and whether a
-- metadata-document client is still named by a request or a grant.
-- CreateIndex
CREATE INDEX "oauth_requests_expires_at_idx" ON "oauth_requests"("expires_at");
-- CreateIndex
CREATE INDEX "oauth_requests_client_id_idx" ON "oauth_requests"("client_id");
-- CreateIndex
CREATE INDEX "oauth_grants_client_id_idx" ON "oauth_grants"("client_id");
-- CreateIndex
CREATE INDEX "oauth_tokens_expires_at_idx" ON "oauth_tokens"("expires_at");
