import { Inject, Injectable } from '@nestjs/common';
import { DatabaseRepository } from '../db/database.repository';

/** What one pass of the sweep deleted, by table. */
export interface SweepCounts {
  requests: number;
  tokens: number;
  clients: number;
}

/**
 * The deletions of the OAuth sweep, in batches of at most `batch` rows per statement (so no
 * statement holds many row locks for long). Each answers how many rows it deleted; the service
 * repeats one until it deletes less than a batch.
 */
@Injectable()
export class OAuthSweepRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /** Authorization requests past their expiry, decided or not (a decision happens before it). */
  async deleteExpiredRequests(now: Date, batch: number): Promise<number> {
    return this.db.client.$executeRaw`
      DELETE FROM oauth_requests WHERE id IN (
        SELECT id FROM oauth_requests WHERE expires_at < ${now} LIMIT ${batch})`;
  }

  /**
   * Codes and tokens past their expiry, and every one of a revoked grant. A used but unexpired
   * code or refresh token stays: presenting it again must still end its grant.
   */
  async deleteEndedTokens(now: Date, batch: number): Promise<number> {
    return this.db.client.$executeRaw`
      DELETE FROM oauth_tokens WHERE hash IN (
        SELECT hash FROM oauth_tokens WHERE expires_at < ${now}
        UNION ALL
        SELECT t.hash FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE g.revoked_at IS NOT NULL
        LIMIT ${batch})`;
  }

  /**
   * Metadata-document clients that no grant and no request names, last fetched before
   * `fetchedBefore`: each is only a copy of a document fetched again at the next authorization.
   * Dynamically registered clients are never deleted (an app keeps its client id).
   */
  async deleteUnusedDocumentClients(fetchedBefore: Date, batch: number): Promise<number> {
    return this.db.client.$executeRaw`
      DELETE FROM oauth_clients WHERE id IN (
        SELECT c.id FROM oauth_clients c
        WHERE c.kind = 'metadata_document' AND c.fetched_at < ${fetchedBefore}
          AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
          AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = c.id)
        LIMIT ${batch}
        FOR UPDATE SKIP LOCKED)`;
  }
}
