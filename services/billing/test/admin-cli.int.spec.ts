import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';
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

function admin(args: string[], token = OPERATOR_TOKEN): Promise<{ code: number; json: Record<string, unknown> }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH ?? '', OPERATOR_URL: h.billing.operatorUrl, OPERATOR_TOKEN: token } }, (error, stdout) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, json: JSON.parse(stdout) as Record<string, unknown> });
    });
  });
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
});
