import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { repoRoot } from '@svc/test-kit';

/** Debian's Chromium, driven by playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and nothing of the browser's own on the network (no QUIC, updates, sync or first-run pages). */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

type ContextOptions = NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>;

/**
 * A Chromium context on a fresh profile directory for the calling `describe`: launched in a
 * beforeAll, closed and its profile removed in an afterAll. Declared before `useStack`, it
 * closes before the stack stops.
 */
export function useChromium(profilePrefix: string, options: ContextOptions = {}): { readonly context: BrowserContext } {
  let profile: string | undefined;
  let context: BrowserContext | undefined;
  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), profilePrefix));
    context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, locale: 'en-US', timezoneId: 'UTC', ...options });
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
  });
  return {
    get context() {
      if (context === undefined) throw new Error('Chromium has not started: read the context inside a hook or a test');
      return context;
    },
  };
}

/** Where the dashboard's browser tests write their screenshots (ignored by git; docs/img holds the chosen ones). */
export const SHOTS = join(repoRoot(), 'test/e2e/screenshots');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 812 };
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The page as it is now, at desktop and phone width: a screenshot each
 * (`SHOTS/dashboard-<name>-<desktop|phone>.png`), no horizontal overflow (and at desktop width
 * no table wider than its frame), and no serious or critical axe-core violation. Problems are
 * added to `problems`; the page is left at desktop width.
 */
export async function checkPage(page: Page, name: string, problems: string[], { fullPage = true }: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  for (const [size, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(150); // let the chart follow the new width before the picture
    await page.screenshot({ path: join(SHOTS, `dashboard-${name}-${size}.png`), fullPage });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    if (overflow > 0) problems.push(`${name} at ${size}: the page is ${overflow}px wider than the screen`);
    // At desktop width every table shows all its columns without scrolling sideways.
    const tables = size === 'desktop' ? await page.evaluate<number>("Math.max(0, ...[...document.querySelectorAll('.table-wrap')].map((w) => w.scrollWidth - w.clientWidth))") : 0;
    if (tables > 0) problems.push(`${name} at ${size}: a table is ${tables}px wider than its frame`);
    if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate<{ id: string; impact: string | null; targets: string[] }[]>(`
      axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations.map((v) => ({
        id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)),
      })))`);
    for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`${name} at ${size}: ${v.impact} ${v.id} ${v.targets.join(' ')}`);
  }
  await page.setViewportSize(DESKTOP);
}
