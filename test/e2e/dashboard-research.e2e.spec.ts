import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { bearer, call, grantCredits, repoRoot, SETTLING_STACK, useStack, waitFor } from '@svc/test-kit';
import { useChromium } from './chromium';
import { RESEARCH_WORKER_TEST_ENV } from './research-stack';

/**
 * The dashboard's Research page in Chromium against the local stack with the research worker:
 * runs made with an API key (completed with structured output, failed, running), each with its
 * status and its cost against its cap; a completed run's output, sources and attempts; a
 * running run cancelled from the page; the status filter; axe-core at desktop and phone width
 * without overflow (screenshots in test/e2e/screenshots/, ignored by git).
 */
const SHOTS = join(repoRoot(), 'test/e2e/screenshots');
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1280, height: 800 };

describe('the Research page in Chromium', () => {
  const pageErrors: string[] = [];
  const browser = useChromium('svc-dashboard-research-', { viewport: DESKTOP });
  const suite = useStack({
    ...SETTLING_STACK, name: 'dash_research', redisDb: 13, researchWorker: true,
    simulatorEnv: { SIM_RESEARCH_MS: '600' },
    researchWorkerEnv: { ...RESEARCH_WORKER_TEST_ENV },
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100' },
  });

  beforeAll(() => {
    mkdirSync(SHOTS, { recursive: true });
    browser.context.on('page', (page) => {
      page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) pageErrors.push(`console: ${message.text()}`);
      });
    });
  });

  async function accessibility(page: Page, name: string): Promise<string[]> {
    const problems: string[] = [];
    for (const viewport of [DESKTOP, { width: 375, height: 812 }]) {
      await page.setViewportSize(viewport);
      await page.waitForTimeout(100);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      if (overflow > 0) problems.push(`${name} at ${viewport.width}px: ${overflow}px too wide`);
      if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE_SOURCE);
      const violations = await page.evaluate<{ id: string; impact: string | null }[]>(
        "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))");
      for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`${name} at ${viewport.width}px: ${v.impact} ${v.id}`);
      if (viewport.width < 400) await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
    }
    await page.setViewportSize(DESKTOP);
    return problems;
  }

  it('lists runs with status and cost against cap, shows a run\'s output and sources, cancels a running run, filters by status', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${suite.gw}/dashboard/signup`);
    await page.getByLabel('Email').fill(`research-${Date.now().toString(36)}@example.com`);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const me = (await (await page.request.get(`${suite.gw}/dashboard/api/me`)).json()) as { account_id: string };
    await grantCredits(suite.stack, me.account_id, 10_000_000);
    const csrf = await page.evaluate<string>("window.localStorage.getItem('svc_dashboard_csrf') ?? ''");
    const key = (await (await page.request.post(`${suite.gw}/dashboard/api/keys`, { data: { name: 'research' }, headers: { 'x-csrf-token': csrf } })).json()) as { secret: string };

    const create = async (body: Record<string, unknown>): Promise<string> => {
      const answer = await call('POST', `${suite.gw}/v1/research`, { body, headers: bearer(key.secret) });
      expect(answer.status).toBe(202);
      return String(answer.body.id);
    };
    const schema = { type: 'object', properties: { summary: { type: 'string' }, year: { type: 'integer' } }, required: ['summary'] };
    const completed = await create({ input: 'When did the first transatlantic telegraph cable work, and for how long?', model: 'exa/agent-medium', max_cost_usd: 0.5, output_schema: schema, metadata: { team: 'history' } });
    const failed = await create({ input: 'A question the provider cannot answer sim:exa=fail', model: 'exa/agent-low', max_cost_usd: 0.25 });
    const tavily = await create({ input: 'Compare the energy density of sodium-ion and lithium-ion cells', model: 'tavily/research-mini', max_cost_usd: 2 });
    const running = await create({ input: 'A long survey of grid-scale storage sim:exa=forever', model: 'exa/agent-auto', max_cost_usd: 3 });
    const status = async (id: string): Promise<string> => String((await call('GET', `${suite.gw}/v1/research/${id}`, { headers: bearer(key.secret) })).body.status);
    for (const [id, want] of [[completed, 'completed'], [failed, 'failed'], [tavily, 'completed'], [running, 'running']] as const) {
      await waitFor(`${id} ${want}`, async () => ((await status(id)) === want ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
    }

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Research', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Research' }).waitFor();
    const row = (id: string) => page.locator(`tr[data-run-id="${id}"]`);
    await row(running).waitFor();
    expect(await page.locator('tr[data-run-id]').count()).toBe(4);
    await expect(row(completed).getByTestId('research-cost').innerText()).resolves.toBe('$0.125 of $0.50');
    await expect(row(completed).locator('.badge').innerText()).resolves.toBe('Completed');
    await expect(row(failed).locator('.badge').innerText()).resolves.toBe('Failed');
    await expect(row(running).locator('.badge').innerText()).resolves.toBe('Running');
    await expect(row(running).getByTestId('research-cost').innerText()).resolves.toBe('holds $3.00 of a $3.00 cap');
    // The page's figures are the API's.
    const listed = (await (await page.request.get(`${suite.gw}/dashboard/api/research`)).json()) as { data: { id: string; cost_usd: number | null }[] };
    expect(listed.data.map((r) => r.id)).toEqual([running, tavily, failed, completed]);

    await row(completed).getByRole('button', { name: 'Show output' }).click();
    const details = page.locator(`#research-${completed}`);
    await details.getByTestId('research-output').waitFor();
    await expect(details.getByRole('heading', { name: 'Sources' }).isVisible()).resolves.toBe(true);
    expect(await details.locator('.research-sources li').count()).toBeGreaterThan(0);
    expect(await details.locator('.research-structured').innerText()).toContain('"summary"');
    expect(await details.locator('.attempts').innerText()).toContain('exa/agent-medium: completed, $0.125');
    expect(await details.innerText()).toContain('metadata team=history');
    await page.screenshot({ path: join(SHOTS, 'research.png'), fullPage: true });
    const problems = await accessibility(page, 'research');

    // Cancel the running run from the page: confirmed in a dialog, then Cancelling, then Cancelled with its cost.
    await row(running).getByRole('button', { name: 'Cancel' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this research run?' });
    await dialog.getByRole('button', { name: 'Cancel the run' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect(row(running).locator('.badge').innerText()).resolves.toMatch(/^(Cancelling|Cancelled)$/);
    await waitFor('the run cancelled', async () => ((await status(running)) === 'cancelled' ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await row(running).locator('.badge', { hasText: 'Cancelled' }).waitFor();
    const cost = await row(running).getByTestId('research-cost').innerText();
    expect(cost).toMatch(/^\$\d+\.\d+ of \$3\.00$/);
    await page.screenshot({ path: join(SHOTS, 'research-cancelled.png'), fullPage: true });

    await page.getByLabel('Status').selectOption('failed');
    await page.locator('tr[data-run-id]').first().waitFor();
    await waitFor('only failed runs', async () => ((await page.locator('tr[data-run-id]').count()) === 1 ? true : undefined));
    expect(await page.locator('tr[data-run-id]').first().getAttribute('data-run-id')).toBe(failed);
    expect(problems).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 180_000);
});
