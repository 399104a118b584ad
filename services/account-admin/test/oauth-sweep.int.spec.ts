import { newId } from '@svc/ids';
import { waitFor } from '@svc/test-kit';
import { insertAccount, startHarness } from './harness';
import type { Harness } from './harness';

/**
 * The periodic sweep of expired OAuth rows (docs/decisions/0046), run by account-admin itself
 * every OAUTH_SWEEP_INTERVAL_MS on the real PostgreSQL: it deletes expired authorization
 * requests, expired codes and tokens, every token of a revoked grant and metadata-document
 * clients nothing refers to; it keeps everything still live, a rotated refresh token until it
 * expires (its reuse must still be detected), grants (the Connected apps page lists ended ones)
 * and dynamically registered clients (an app keeps its client id).
 */
describe('the sweep of expired OAuth rows', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('oauth_sweep', { OAUTH_SWEEP_INTERVAL_MS: '200' });
  });

  afterAll(async () => {
    await h.close();
  });

  const ago = (seconds: number): Date => new Date(Date.now() - seconds * 1000);
  const ahead = (seconds: number): Date => new Date(Date.now() + seconds * 1000);

  async function client(id: string, kind: 'dynamic' | 'metadata_document', at: Date): Promise<string> {
    await h.pg.query('INSERT INTO oauth_clients (id, kind, name, redirect_uris, created_at, fetched_at) VALUES ($1, $2, $3, $4, $5, $6)', [id, kind, id, ['https://app.example/cb'], at, kind === 'dynamic' ? null : at]);
    return id;
  }

  async function request(clientId: string, expiresAt: Date, decided: boolean): Promise<string> {
    const id = newId('oauthRequest');
    await h.pg.query('INSERT INTO oauth_requests (id, client_id, redirect_uri, code_challenge, expires_at, decided_at) VALUES ($1, $2, $3, $4, $5, $6)', [id, clientId, 'https://app.example/cb', 'c'.repeat(43), expiresAt, decided ? ago(1) : null]);
    return id;
  }

  async function grant(accountId: string, clientId: string, revoked: boolean): Promise<string> {
    const keyId = newId('apiKey');
    await h.pg.query(`INSERT INTO keys (id, account_id, kind, name, key_hash, label, updated_at, deleted_at) VALUES ($1, $2, 'api', 'app', $3, 'svc-xxxx…', now(), $4)`, [keyId, accountId, keyId.padEnd(64, '0'), revoked ? new Date() : null]);
    const id = newId('oauthGrant');
    await h.pg.query('INSERT INTO oauth_grants (id, account_id, client_id, key_id, redirect_uri, revoked_at, revoked_reason) VALUES ($1, $2, $3, $4, $5, $6, $7)', [id, accountId, clientId, keyId, 'https://app.example/cb', revoked ? new Date() : null, revoked ? 'revoked by the owner' : null]);
    return id;
  }

  let tokenCount = 0;
  async function token(grantId: string, kind: 'code' | 'access' | 'refresh', expiresAt: Date, used = false): Promise<string> {
    const hash = String(++tokenCount).padStart(64, 'f');
    await h.pg.query('INSERT INTO oauth_tokens (hash, grant_id, kind, expires_at, used_at) VALUES ($1, $2, $3, $4, $5)', [hash, grantId, kind, expiresAt, used ? ago(1) : null]);
    return hash;
  }

  const ids = async (sql: string): Promise<string[]> => (await h.pg.query<{ id: string }>(sql)).rows.map((row) => row.id).sort();

  it('deletes what has expired and keeps what is live', async () => {
    const accountId = await insertAccount(h.pg);
    // One transaction: the sweep, running every 200 ms, sees all of it or none.
    await h.pg.query('BEGIN');
    const dynamicOld = await client(newId('oauthClient'), 'dynamic', ago(90 * 86_400));
    const documentGranted = await client('https://granted.example/client.json', 'metadata_document', ago(90 * 86_400));
    const documentUnused = await client('https://unused.example/client.json', 'metadata_document', ago(2 * 3_600));
    const documentPending = await client('https://pending.example/client.json', 'metadata_document', ago(2 * 3_600));
    const documentJustFetched = await client('https://fresh.example/client.json', 'metadata_document', new Date());

    await request(documentUnused, ago(60), false); // expired: gone, and then its client too
    await request(dynamicOld, ago(60), true); // decided and expired: gone
    const requestLive = await request(documentPending, ahead(300), false);

    const live = await grant(accountId, dynamicOld, false);
    const ended = await grant(accountId, documentGranted, true);
    await token(live, 'code', ago(1), true); // used and expired: gone
    const codeLive = await token(live, 'code', ahead(50));
    await token(live, 'access', ago(1)); // expired: gone
    const accessLive = await token(live, 'access', ahead(3_000));
    const refreshRotated = await token(live, 'refresh', ahead(86_400), true);
    await token(live, 'refresh', ago(1)); // expired: gone
    await token(ended, 'access', ahead(3_000)); // its grant ended: gone
    await token(ended, 'refresh', ahead(86_400)); // its grant ended: gone
    await h.pg.query('COMMIT');

    await waitFor('the sweep to delete the expired rows', async () => ((await ids('SELECT id FROM oauth_requests')).length === 1 && (await ids('SELECT hash AS id FROM oauth_tokens')).length === 3 ? true : undefined), { timeoutMs: 10_000 });

    expect(await ids('SELECT id FROM oauth_requests')).toEqual([requestLive]);
    expect(await ids('SELECT hash AS id FROM oauth_tokens')).toEqual([codeLive, accessLive, refreshRotated].sort());
    expect(await ids('SELECT id FROM oauth_grants')).toEqual([live, ended].sort());
    await waitFor('the unused metadata-document client to go', async () => (!(await ids('SELECT id FROM oauth_clients')).includes(documentUnused) ? true : undefined), { timeoutMs: 10_000 });
    expect(await ids('SELECT id FROM oauth_clients')).toEqual([dynamicOld, documentGranted, documentPending, documentJustFetched].sort());
  });
});
