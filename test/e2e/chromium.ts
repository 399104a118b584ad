import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

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
