import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run when missing); browser suites skip without it. */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed`;

/**
 * Headless Chromium with a fresh profile and nothing that reaches the network by itself (no updates,
 * sync or QUIC probes): the tests' traffic stays on loopback. The profile goes when the browser closes.
 */
export async function launchChromium(
  options: { viewport?: { width: number; height: number }; colorScheme?: 'light' | 'dark'; hasTouch?: boolean; isMobile?: boolean } = {},
): Promise<BrowserContext> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'flagpost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...options,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const close = context.close.bind(context);
  context.close = async (...args: Parameters<BrowserContext['close']>) => {
    await close(...args);
    // Chromium's helpers may still be writing for a moment; a temporary folder left behind is harmless.
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    } catch {
      // left for the system's temporary-file cleanup
    }
  };
  return context;
}
