import { Client, Pool } from 'pg';
import { databaseUrl } from '@svc/test-kit';
import { inTransaction } from '../src/db/prisma.repository';

/**
 * inTransaction on the real PostgreSQL: commit, rollback, and a session terminated while its
 * connection is checked out between two statements (what an outage does to the ledger drain).
 * One connection in the pool, so a temporary table shows which session a statement ran on.
 */
describe('inTransaction on PostgreSQL', () => {
  let pool: Pool;
  let admin: Client;
  const idleErrors: Error[] = [];

  beforeEach(() => {
    pool = new Pool({ connectionString: databaseUrl('postgres'), max: 1 });
    pool.on('error', (error) => idleErrors.push(error));
  });

  afterEach(() => pool.end());

  beforeAll(async () => {
    admin = new Client({ connectionString: databaseUrl('postgres') });
    await admin.connect();
  });

  afterAll(() => admin.end());

  const tableExists = async (): Promise<boolean> =>
    (await pool.query<{ t: string | null }>("SELECT to_regclass('pg_temp.in_tx_probe')::text AS t")).rows[0]?.t !== null;

  it('commits what the work did and gives the connection back', async () => {
    const result = await inTransaction(pool, async (client) => {
      await client.query('CREATE TEMP TABLE in_tx_probe (a int)');
      return 'done';
    });
    expect(result).toBe('done');
    expect(pool.totalCount).toBe(1);
    expect(await tableExists()).toBe(true);
  });

  it('rolls back when the work throws, rethrows, and keeps the healthy connection', async () => {
    await expect(inTransaction(pool, async (client) => {
      await client.query('CREATE TEMP TABLE in_tx_probe (a int)');
      throw new Error('work failed');
    })).rejects.toThrow('work failed');
    expect(pool.totalCount).toBe(1);
    expect(await tableExists()).toBe(false);
  });

  it('survives the session being terminated between two statements: the work fails and the pool discards the connection', async () => {
    let firstPid = 0;
    const outcome = inTransaction(pool, async (client) => {
      firstPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
      // No statement is running: node-postgres reports the end of the session as an
      // 'error' event on the checked-out connection, which ends the process if unheard.
      const ended = new Promise((resolve) => client.once('end', resolve));
      await admin.query('SELECT pg_terminate_backend($1)', [firstPid]);
      await ended;
      await client.query('SELECT 1');
    });
    await expect(outcome).rejects.toThrow();
    expect(firstPid).toBeGreaterThan(0);
    // The broken connection was not given back: the next statement runs on a new session.
    const next = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    expect(next.rows[0]?.pid).not.toBe(firstPid);
    expect(pool.totalCount).toBe(1);
  });
});
