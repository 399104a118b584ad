import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { providerHealthKeys } from '@svc/contracts';
import { createRedisClient } from '@svc/redis-client';
import { redisUrl, repoRoot } from '@svc/test-kit';
import { OPERATOR_TOKEN, startHarness } from './billing-harness';
import type { Harness } from './billing-harness';

let h: Harness;
const cli = join(repoRoot(), 'services/billing/dist/cli/admin-cli.js');

beforeAll(async () => {
  // The CLI runs as a separate process from the build output; build it first (incremental).
  execFileSync(process.execPath, [join(repoRoot(), 'node_modules/typescript/bin/tsc'), '-b', join(repoRoot(), 'services/billing')], { stdio: 'inherit' });
  h = await startHarness('cli');
}, 180_000);

afterAll(async () => {
  await h.close();
});

function adminText(args: string[], token = OPERATOR_TOKEN): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? '', OPERATOR_URL: h.billing.operatorUrl, OPERATOR_TOKEN: token } }, (error, stdout) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout });
    });
  });
}

async function admin(args: string[], token = OPERATOR_TOKEN): Promise<{ code: number; json: Record<string, unknown> }> {
  const { code, stdout } = await adminText(args, token);
  return { code, json: JSON.parse(stdout) as Record<string, unknown> };
}

describe('npm run admin', () => {
  it('creates an account, grants credit idempotently and lists the ledger, printing JSON', async () => {
    const created = await admin(['create-account', '--email', 'cli@example.com', '--name', 'CLI']);
    expect(created.code).toBe(0);
    const accountId = created.json.account_id as string;
    expect(accountId).toMatch(/^acct_/);

    const granted = await admin(['grant', accountId, '25.5', '--reason', 'support credit', '--idempotency-key', 'cli-1']);
    expect(granted.code).toBe(0);
    expect(granted.json).toMatchObject({ kind: 'grant', amount_usd: 25.5, balance_after_usd: 25.5, reason: 'support credit' });
    const again = await admin(['grant', accountId, '25.5', '--reason', 'support credit', '--idempotency-key', 'cli-1']);
    expect(again.json.id).toBe(granted.json.id);

    const ledger = await admin(['ledger', accountId, '--limit', '5']);
    expect(ledger.code).toBe(0);
    expect((ledger.json.data as unknown[]).length).toBe(1);
  });

  it('exits 1 with the error JSON on a refused call', async () => {
    const wrongToken = await admin(['create-account'], 'a-wrong-operator-token');
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.json).toMatchObject({ error: { code: 'invalid_api_key' } });

    const badAmount = await admin(['grant', 'acct_AAAAAAAAAAAAAAAAAAAAAAAA', '1.1234567', '--reason', 'x']);
    expect(badAmount.code).toBe(1);
    expect(badAmount.json).toMatchObject({ error: { code: 'invalid_request' } });

    const usage = await admin(['grant']);
    expect(usage.code).toBe(1);
    expect(usage.json).toMatchObject({ error: { code: 'usage' } });
  });

  it('prints the finance report and exports the ledger of a period as CSV, to stdout or a file', async () => {
    const created = await admin(['create-account', '--email', 'finance-cli@example.com']);
    const accountId = created.json.account_id as string;
    expect((await admin(['grant', accountId, '7.25', '--reason', 'finance cli'])).code).toBe(0);

    const report = await admin(['finance-report']);
    expect(report.code).toBe(0);
    expect(report.json).toHaveProperty('request_id');
    const direct = await fetch(`${h.billing.operatorUrl}/operator/finance/reconciliation`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    const expected = (await direct.json()) as Record<string, unknown>;
    expect(Object.keys(report.json).sort()).toEqual(Object.keys(expected).sort());

    const today = new Date().toISOString().slice(0, 10);
    const csv = await adminText(['ledger-export', '--from', today, '--to', today, '--account', accountId]);
    expect(csv.code).toBe(0);
    const lines = csv.stdout.trim().split(/\r?\n/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(accountId);
    expect(lines[1]).toContain('7.250000');

    const dir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
    try {
      const out = join(dir, 'ledger.csv');
      const written = await admin(['ledger-export', '--account', accountId, '--out', out]);
      expect(written.json).toEqual({ file: out, rows: 1 });
      expect(readFileSync(out, 'utf8')).toBe(csv.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const badDate = await admin(['ledger-export', '--from', '2026-13-40']);
    expect(badDate.code).toBe(1);
    expect(badDate.json).toMatchObject({ error: { code: 'invalid_request' } });
    expect((await admin(['finance-report', 'extra'])).json).toMatchObject({ error: { code: 'usage' } });
  });
});

describe('npm run admin: provider breakers (the operator API writes the state every gateway reads)', () => {
  it('forces a breaker open, then closed, then gives it back to its window; refuses an unknown provider or mode', async () => {
    const redis = createRedisClient({ url: redisUrl(3), cluster: false });
    const key = providerHealthKeys.breaker('tavily');
    try {
      await redis.del(key);
      const open = await admin(['breaker', 'tavily', 'open']);
      expect(open.code).toBe(0);
      expect(open.json).toMatchObject({ provider: 'tavily', state: 'closed', forced: 'open' });
      expect(await redis.hget(key, 'force')).toBe('open');

      // An open breaker (as a gateway's window writes it), then forced closed: closed at once.
      await redis.hset(key, 'state', 'open', 'opened_at_ms', Date.UTC(2031, 0, 1), 'open_until_ms', Date.UTC(2031, 0, 1, 0, 0, 30), 'reason', '12 of 20 calls failed');
      const listed = await admin(['breakers']);
      expect((listed.json.data as { provider: string }[]).map((b) => b.provider)).toEqual(['brave', 'exa', 'tavily']);
      expect((listed.json.data as Record<string, unknown>[])[2]).toEqual({
        provider: 'tavily', state: 'open', forced: 'open', reason: '12 of 20 calls failed', opened_at: '2031-01-01T00:00:00.000Z', open_until: '2031-01-01T00:00:30.000Z',
      });
      const closed = await admin(['breaker', 'tavily', 'closed']);
      expect(closed.json).toMatchObject({ state: 'closed', forced: 'closed', reason: null });
      expect(await redis.hmget(key, 'state', 'force', 'open_until_ms')).toEqual(['closed', 'closed', null]);

      const auto = await admin(['breaker', 'tavily', 'auto']);
      expect(auto.json).toMatchObject({ state: 'closed', forced: null });
      expect(await redis.hget(key, 'force')).toBeNull();

      expect((await admin(['breaker', 'google', 'open'])).json).toMatchObject({ error: { code: 'unknown_provider' } });
      expect((await admin(['breaker', 'tavily', 'half'])).json).toMatchObject({ error: { code: 'usage' } });
      const direct = await fetch(`${h.billing.operatorUrl}/operator/providers/exa/breaker`, {
        method: 'PUT', headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'half' }),
      });
      expect(direct.status).toBe(400);
      expect(await redis.hget(providerHealthKeys.breaker('exa'), 'force')).toBeNull();
    } finally {
      await redis.del(key);
      redis.disconnect();
    }
  });
});
